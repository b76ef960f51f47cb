// SPDX-License-Identifier: MIT
// The footer of a zone's TZif file (RFC 8536): the POSIX TZ rule after the zone's last listed
// transition, and that transition's time. TimeZone::named reads it once per zone, next to
// date's reading of the same file (src/encode/timestamp.cpp); a file without a usable footer
// is reported on stderr and the zone keeps its last listed offset.
#pragma once

#include "encode/tz_rule.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fieldlog::detail {

/// What a footer says: from `rule_from` (the last listed transition; the minimum when the file
/// lists none) the zone follows `rule`.
struct ZoneFooter {
    std::int64_t rule_from = 0;
    PosixTzRule rule;
};

/// Reads a TZif file's v2+ header and data blocks far enough to reach the footer; on a file
/// without a valid one, says why in `error` and returns nullopt.
std::optional<ZoneFooter> read_tzif_footer(std::string_view file, std::string& error);

/// The footer zone `name` follows, from its TZif file's bytes (nullopt: unreadable), checked
/// against `table_offset` (the offset the zone's table gives at a UTC second, whole minutes)
/// at the last listed transition. Without one that is valid and agrees, writes one stderr line
/// naming the zone and returns nullopt: the zone keeps its last listed offset.
std::optional<ZoneFooter> zone_footer(std::string_view name, const std::optional<std::string>& file,
                                      const std::function<std::int32_t(std::int64_t)>& table_offset);

/// The bytes of zone `name`'s TZif file in the directory date reads (its rule, which ignores
/// TZDIR); nullopt when it cannot be read.
std::optional<std::string> read_zone_file(std::string_view name);

/// One offset a TZif file lists: in force from `from` (a UTC second) to the next one's.
struct ListedOffset {
    std::int64_t from;
    std::int32_t offset;  ///< seconds east of UTC
};

/// Every offset a TZif file lists (RFC 8536: the v2+ data block, or v1's for a v1 file), the
/// first from the minimum (the type in force before the first transition); on a malformed
/// file, says why in `error` and returns nullopt. For builds without date-tz.
std::optional<std::vector<ListedOffset>> read_tzif_offsets(std::string_view file, std::string& error);

/// The TZif file of the local zone, as the C library finds it: TZ (`:Name`, `Name` or an
/// absolute path) when set, else /etc/localtime; its name in `name` (the part after
/// `zoneinfo/` when there is one, else the path). nullopt when it cannot be read.
std::optional<std::string> read_local_zone_file(std::string& name);

/// Whole minutes of an offset in seconds, toward zero: how fieldlog writes offsets with seconds.
constexpr std::int32_t whole_minutes(std::int32_t offset) noexcept { return offset / 60 * 60; }

}  // namespace fieldlog::detail
