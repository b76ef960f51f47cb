// SPDX-License-Identifier: MIT
// What the journald sink sends: a record's parts as one entry of journald's native protocol,
// values written as the JSON encoder (src/encode/) writes them. The field mapping is documented
// on JournaldSink.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/buffer.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog::detail {

/// One entry at a time, in buffers it keeps: they grow to the largest record so far and stay.
class JournaldEntry {
public:
    /// `identifier` is SYSLOG_IDENTIFIER's value; "" writes none.
    explicit JournaldEntry(std::string identifier);

    /// Makes the entry of `record`, replacing the last one. Throws what a user type's encoding
    /// throws. The crash path's record fits the room reserved up front: no heap.
    void build(const RecordView& record);
    [[nodiscard]] std::string_view bytes() const noexcept { return entry_.view(); }

private:
    std::string identifier_;
    Buffer entry_;
    Buffer scratch_;       ///< a message, an error text or a field name on its way
    Buffer json_scratch_;  ///< the JSON encoder's
    Buffer cut_scratch_;   ///< a string being cut to the value cap
    std::vector<const Field*> fields_;
};

}  // namespace fieldlog::detail
