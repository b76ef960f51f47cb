// SPDX-License-Identifier: MIT
// The OTLP sink's HTTP client: one libcurl handle, kept alive between requests (HTTP/1.1), on
// the sink's thread only; another thread may cut a request short. Built without libcurl
// (FIELDLOG_WITH_OTLP=OFF), making one throws.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "fieldlog/sinks/otlp_sink.hpp"
#include "otlp_crash_post.hpp"

namespace fieldlog::detail {

/// Why `endpoint` cannot be an OTLP/HTTP endpoint, in plain words; "" when it can: an http:// or
/// https:// URL with a host, a port (when given) from 1 to 65535 and a well-formed path, as
/// libcurl's URL parser reads it. A build without OTLP says that it has none, whatever the
/// endpoint.
std::string endpoint_problem(const std::string& endpoint);

/// What one POST came to.
struct HttpResult {
    int status = 0;  ///< the HTTP status; 0 when no answer came (no connection, a timeout)
    /// The server's Retry-After, when it sent one that parses; negative otherwise.
    std::chrono::milliseconds retry_after{-1};
    std::string_view body{};  ///< the response's body, until the next post()
    std::string_view error{};  ///< libcurl's words when status is 0
};

class OtlpHttpClient {
public:
    /// Throws std::invalid_argument when this build has no OTLP or no zlib for gzip, or the
    /// endpoint is not one (endpoint_problem()).
    OtlpHttpClient(const OtlpSinkOptions& options, std::string_view content_type);
    ~OtlpHttpClient();
    OtlpHttpClient(const OtlpHttpClient&) = delete;
    OtlpHttpClient& operator=(const OtlpHttpClient&) = delete;

    /// POSTs `body` (gzipped first when the options say so), waiting at most `timeout`, and
    /// not past a give_up_at() time.
    HttpResult post(std::string_view body, std::chrono::milliseconds timeout);
    /// Any thread: a post() running now or later gives up at `when` (the sink's close deadline).
    void give_up_at(std::chrono::steady_clock::time_point when) noexcept;
    /// The same request for the crash path, uncompressed, to an http:// endpoint; nullptr for
    /// an https:// one.
    [[nodiscard]] CrashPost* crash_post() noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog::detail
