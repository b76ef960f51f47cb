// SPDX-License-Identifier: MIT
// A logger's name in the form the JSON encoder writes it, made once with the logger, so that a
// record copies bytes instead of escaping the name again.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

struct EncodedName {
    /// Whole blocks of this size are copied: a record's copy is a short loop of fixed-size
    /// moves, whatever the name's length.
    static constexpr std::size_t kBlock = 16;

    explicit EncodedName(std::string_view name);

    /// Copies the JSON form to `o`, which has room for json_padded() bytes (those past
    /// json_size() are left for the next write); returns the end of the form.
    char* copy_json(char* o) const noexcept {
        for (std::size_t i = 0; i < json_padded_; i += kBlock) std::memcpy(o + i, json_.get() + i, kBlock);
        return o + json_size_;
    }
    [[nodiscard]] std::size_t json_size() const noexcept { return json_size_; }
    [[nodiscard]] std::size_t json_padded() const noexcept { return json_padded_; }

private:
    std::unique_ptr<char[]> json_;  ///< `"<name, escaped>","msg":"`, then padding to a whole block
    std::size_t json_size_ = 0;
    std::size_t json_padded_ = 0;
};

}  // namespace fieldlog::detail
