// SPDX-License-Identifier: MIT
// The RFC 5424 header shared by the UDP and the syslog (TCP/TLS) sinks.
#include "syslog_header.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "sink_io.hpp"

namespace fieldlog::detail {
namespace {

/// Appends `value` to `out` as an RFC 5424 header field: printable ASCII only, at most `limit`
/// characters, "-" when nothing is left.
void append_header_field(std::string& out, std::string_view value, std::size_t limit) {
    const std::size_t start = out.size();
    for (const char c : value.substr(0, limit)) out += (c >= 33 && c <= 126) ? c : '_';
    if (out.size() == start) out += '-';
    out += ' ';
}

char* append_pri(char* out, int pri) noexcept {
    *out++ = '<';
    out = std::to_chars(out, out + 3, pri).ptr;
    for (const char c : std::string_view(">1 ")) *out++ = c;
    return out;
}

}  // namespace

int syslog_severity(Level level) noexcept {
    switch (level) {
        case Level::trace:
        case Level::debug: return 7;
        case Level::info: return 6;
        case Level::warn: return 4;
        case Level::error: return 3;
        case Level::fatal:
        case Level::off: return 2;
    }
    return 6;
}

char* append_syslog_head(char* out, int facility, Level level, Timestamp time) noexcept {
    out = append_pri(out, facility * 8 + syslog_severity(level));
    out = append_rfc3339(out, time, TimestampFormat{.precision = TimestampPrecision::micro});
    *out++ = ' ';
    return out;
}

char* append_syslog_crash_head(char* out, int facility) noexcept {
    out = append_pri(out, facility * 8 + syslog_severity(Level::fatal));
    *out++ = '-';
    *out++ = ' ';
    return out;
}

SyslogTail::SyslogTail(std::string_view hostname, std::string_view app_name) {
    std::string name(hostname);
    if (name.empty()) {
        char buffer[256] = {};
        ::gethostname(buffer, sizeof buffer - 1);
        name = buffer;
    }
    append_header_field(host_app_, name, 255);
    append_header_field(host_app_, app_name, 48);
    build();
}

std::string_view SyslogTail::current() noexcept {
    if (fork_seen_ != fork_generation()) build();
    return last();
}

void SyslogTail::build() noexcept {
    fork_seen_ = fork_generation();
    char pid[24];
    char* const pid_end = std::to_chars(pid, pid + sizeof pid, ::getpid()).ptr;
    const std::size_t host_app_size = std::min(host_app_.size(), tail_.size() - 32);
    char* o = std::copy_n(host_app_.data(), host_app_size, tail_.data());
    o = std::copy(pid, pid_end, o);
    for (const char c : std::string_view(" - - ")) *o++ = c;
    size_ = static_cast<std::size_t>(o - tail_.data());
}

}  // namespace fieldlog::detail
