// SPDX-License-Identifier: MIT
// The RFC 5424 header both syslog sinks put before a record (UDP datagrams, TCP/TLS frames):
// `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - ` followed by the JSON line as MSG. Internal
// to sinks/; building the per-record head allocates nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fieldlog/level.hpp"
#include "fieldlog/timestamp.hpp"

namespace fieldlog::detail {

/// The longest head: "<191>1 " + a 27-character timestamp + ' '.
inline constexpr std::size_t kSyslogHeadCapacity = 48;

/// RFC 5424 severity of a level (trace and debug 7, info 6, warn 4, error 3, fatal 2).
int syslog_severity(Level level) noexcept;

/// Writes "<PRI>1 TIMESTAMP " (UTC, 6 fraction digits, floored) at `out`; returns its end.
/// `out` has room for kSyslogHeadCapacity bytes.
char* append_syslog_head(char* out, int facility, Level level, Timestamp time) noexcept;
/// Writes "<PRI>1 - " (a nil TIMESTAMP: no clock reading, for the crash path); returns its end.
char* append_syslog_crash_head(char* out, int facility) noexcept;

/// "HOSTNAME APP-NAME PROCID - - ", the part of the header that is the same for every record;
/// built again in a forked child (a new PROCID).
class SyslogTail {
public:
    /// HOSTNAME and APP-NAME keep printable ASCII only (others become '_') and are cut to 255
    /// and 48 characters; an empty hostname is gethostname()'s.
    SyslogTail(std::string_view hostname, std::string_view app_name);

    /// The tail for the current process (rebuilt when a fork happened since the last call).
    [[nodiscard]] std::string_view current() noexcept;
    /// The tail as last built, without looking for a fork (async-signal-safe).
    [[nodiscard]] std::string_view last() const noexcept { return {tail_.data(), size_}; }
    /// The longest tail current() can return.
    [[nodiscard]] std::size_t capacity() const noexcept { return tail_.size(); }

private:
    void build() noexcept;

    std::string host_app_;  ///< "HOSTNAME APP-NAME "
    std::array<char, 160> tail_{};
    std::size_t size_ = 0;
    std::uint64_t fork_seen_ = 0;
};

}  // namespace fieldlog::detail
