// Bound fields: what Logger::with attaches, encoded once per format when the child logger is
// made and copied as bytes into every record. Immutable and shared between logger copies.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

struct BoundFields {
    std::array<std::string, format_count> encoded;  ///< indexed by Format
};

inline std::string_view bound_bytes(const BoundFields* bound, Format format) noexcept {
    return bound != nullptr ? std::string_view(bound->encoded[static_cast<std::size_t>(format)]) : std::string_view{};
}

/// The parent's bytes followed by `fields`, in every format (with the running encoder options).
std::shared_ptr<const BoundFields> make_bound_fields(const BoundFields* parent, std::span<const Field> fields);

}  // namespace fieldlog::detail
