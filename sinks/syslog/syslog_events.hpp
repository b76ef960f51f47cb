// SPDX-License-Identifier: MIT
// How the parts that run on the syslog sink's thread (its byte stream and sessions) tell the
// sink what went wrong: a failure counted in the sink's errors, a rate-limited report on stderr,
// a record the receiver refused, frames the receiver now has. Internal to sinks/.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

namespace fieldlog::detail {

/// strerror_r's text for `error`, in `buffer`.
template <std::size_t N>
std::string_view error_text(int error, char (&buffer)[N]) noexcept {
    return ::strerror_r(error, buffer, N);  // GNU: returns the text
}

class SyslogEvents {
public:
    virtual void count_error() noexcept = 0;
    /// A record the receiver refused: counted dropped, refused and as an error.
    virtual void count_refused() noexcept = 0;
    virtual void report(std::string_view operation, std::string_view reason) noexcept = 0;
    /// Frames left the ring, the receiver has them (a closing flush() may wait for that).
    virtual void released() noexcept = 0;
    void report(std::string_view operation, int error) noexcept {
        char text[128];
        report(operation, error_text(error, text));
    }

protected:
    ~SyslogEvents() = default;
};

}  // namespace fieldlog::detail
