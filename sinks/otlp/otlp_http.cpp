// SPDX-License-Identifier: MIT
// The OTLP sink's HTTP client through libcurl (otlp_http.hpp): a well-kept library for what is
// hard to get right by hand (TLS with the system's store, proxies, HTTP/1.1 keep-alive,
// chunked and compressed answers). The body is gzipped here, on the sink's thread, with zlib.
#include "otlp_http.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <string>

#if FIELDLOG_WITH_GZIP
#include <zlib.h>
#endif

namespace fieldlog::detail {
namespace {

constexpr long long kLongestPollMs = 1000;  // a transfer's timers are libcurl's; this only bounds one wait

/// curl_global_init is not thread-safe: once per process, before the first handle.
void init_curl_once() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

/// The value of a `Retry-After` header line (`name: value\r\n`), in milliseconds, or -1: delay
/// seconds, or an HTTP date.
long long retry_after_ms(std::string_view line) {
    constexpr std::string_view kName = "retry-after:";
    if (line.size() < kName.size()) return -1;
    for (std::size_t i = 0; i < kName.size(); ++i) {
        const char c = line[i];
        if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kName[i]) return -1;
    }
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
    long long seconds = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (error == std::errc() && end == value.data() + value.size()) return seconds < 0 ? -1 : seconds * 1000;
    const std::string date(value);
    const time_t when = curl_getdate(date.c_str(), nullptr);
    if (when < 0) return -1;
    const time_t now = std::time(nullptr);
    return when > now ? static_cast<long long>(when - now) * 1000 : 0;
}

/// A URL handle of libcurl's, freed with it.
struct UrlHandle {
    CURLU* url = curl_url();
    UrlHandle() {
        if (url == nullptr) throw std::bad_alloc();
    }
    ~UrlHandle() { curl_url_cleanup(url); }
    UrlHandle(const UrlHandle&) = delete;
    UrlHandle& operator=(const UrlHandle&) = delete;
};

constexpr std::string_view kWrite = " (write http://host:port/v1/logs, or https://)";

/// Parses `endpoint` into `url`; why it is no endpoint, or "".
std::string parse_endpoint(const std::string& endpoint, CURLU* url) {
    const std::size_t separator = endpoint.find("://");
    if (separator == std::string::npos) return "not a URL" + std::string(kWrite);
    std::string scheme = endpoint.substr(0, separator);
    for (char& c : scheme) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    if (scheme != "http" && scheme != "https") return "the scheme is not http or https" + std::string(kWrite);
    // libcurl takes "http:///v1/logs" as the host "v1": an empty authority is no host.
    if (endpoint.size() == separator + 3 || endpoint[separator + 3] == '/') return "no host" + std::string(kWrite);
    switch (const CURLUcode rc = curl_url_set(url, CURLUPART_URL, endpoint.c_str(), 0)) {
        case CURLUE_OK: break;
        case CURLUE_NO_HOST: return "no host" + std::string(kWrite);
        case CURLUE_BAD_PORT_NUMBER: return "the port (after the host and one ':') is not a number from 1 to 65535";
        case CURLUE_BAD_HOSTNAME: return "the host is not a host name or an IP address";
        case CURLUE_BAD_IPV6: return "a bad IPv6 address (it goes in brackets: http://[::1]:4318/v1/logs)";
        case CURLUE_BAD_PATH:
        case CURLUE_BAD_QUERY:
        case CURLUE_BAD_FRAGMENT: return "a character a URL cannot hold after the host (write a space as %20)";
        default: return curl_url_strerror(rc);
    }
    char* port = nullptr;
    if (curl_url_get(url, CURLUPART_PORT, &port, 0) == CURLUE_OK) {
        const bool zero = std::string_view(port).find_first_not_of('0') == std::string_view::npos;
        curl_free(port);
        if (zero) return "the port (after the host and one ':') is not a number from 1 to 65535";
    }
    return {};
}

/// A part of `url`, or "" when it has none.
std::string url_part(CURLU* url, CURLUPart part, unsigned flags = 0) {
    char* text = nullptr;
    if (curl_url_get(url, part, &text, flags) != CURLUE_OK) return {};
    std::string value(text);
    curl_free(text);
    return value;
}

/// The crash path's POST to an http:// endpoint (`url`), with `headers` ("name: value\r\n"
/// each); nullptr for https://.
std::unique_ptr<CrashPost> crash_post_for(CURLU* url, const std::string& headers) {
    if (url_part(url, CURLUPART_SCHEME) != "http") return nullptr;
    std::string host = url_part(url, CURLUPART_HOST);  // an IPv6 address in brackets
    const std::string port = url_part(url, CURLUPART_PORT, CURLU_DEFAULT_PORT);
    std::string target = url_part(url, CURLUPART_PATH);
    if (const std::string query = url_part(url, CURLUPART_QUERY); !query.empty()) target += '?' + query;
    std::string head = "POST " + target + " HTTP/1.1\r\nHost: " + host + ':' + port + "\r\n" + headers +
                       "Connection: close\r\nContent-Length: ";
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    return std::make_unique<CrashPost>(HostPort{std::move(host), port}, std::move(head));
}

}  // namespace

std::string endpoint_problem(const std::string& endpoint) {
    const UrlHandle url;
    return parse_endpoint(endpoint, url.url);
}

struct OtlpHttpClient::State {
    UrlHandle url;  ///< the endpoint, parsed once when the sink is made
    std::unique_ptr<CrashPost> crash;
    CURLM* multi = nullptr;  ///< runs the one transfer, so that another thread can wake it
    CURL* curl = nullptr;
    curl_slist* headers = nullptr;
    std::string response;
    long long retry_after = -1;
    bool gzip = false;
    std::string compressed;
    char error[CURL_ERROR_SIZE]{};
    std::atomic<std::chrono::steady_clock::rep> give_up_at{std::chrono::steady_clock::time_point::max().time_since_epoch().count()};

    ~State() {  // the easy handle goes first: it uses `url`
        if (headers != nullptr) curl_slist_free_all(headers);
        if (curl != nullptr) curl_easy_cleanup(curl);
        if (multi != nullptr) curl_multi_cleanup(multi);
    }

    [[nodiscard]] std::chrono::steady_clock::time_point given_up_at() const noexcept {
        return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(give_up_at.load()));
    }

    /// Runs the transfer on `multi` until it ends or given_up_at() passes.
    CURLcode perform() {
        using Clock = std::chrono::steady_clock;
        if (curl_multi_add_handle(multi, curl) != CURLM_OK) return CURLE_FAILED_INIT;
        CURLcode code = CURLE_OK;
        for (;;) {
            int running = 0;
            if (curl_multi_perform(multi, &running) != CURLM_OK) {
                code = CURLE_FAILED_INIT;
                break;
            }
            if (running == 0) {
                int left = 0;
                const CURLMsg* done = curl_multi_info_read(multi, &left);
                code = done != nullptr && done->msg == CURLMSG_DONE ? done->data.result : CURLE_FAILED_INIT;
                break;
            }
            const Clock::time_point give_up = given_up_at();
            if (Clock::now() >= give_up) {
                std::snprintf(error, sizeof error, "given up: the sink closed (shutdown_timeout)");
                code = CURLE_ABORTED_BY_CALLBACK;
                break;
            }
            const auto wait = std::clamp<long long>(
                std::chrono::ceil<std::chrono::milliseconds>(give_up - Clock::now()).count(), 0, kLongestPollMs);
            curl_multi_poll(multi, nullptr, 0, static_cast<int>(wait), nullptr);
        }
        curl_multi_remove_handle(multi, curl);
        return code;
    }

    static size_t on_body(char* data, size_t size, size_t count, void* self) {
        static_cast<State*>(self)->response.append(data, size * count);
        return size * count;
    }
    static size_t on_header(char* data, size_t size, size_t count, void* self) {
        const long long ms = retry_after_ms(std::string_view(data, size * count));
        if (ms >= 0) static_cast<State*>(self)->retry_after = ms;
        return size * count;
    }

    /// `body` gzipped into `compressed`; false when zlib failed.
    bool compress(std::string_view body) {
#if FIELDLOG_WITH_GZIP
        z_stream z{};
        if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
        compressed.resize(deflateBound(&z, static_cast<uLong>(body.size())) + 32);
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
        z.avail_in = static_cast<uInt>(body.size());
        z.next_out = reinterpret_cast<Bytef*>(compressed.data());
        z.avail_out = static_cast<uInt>(compressed.size());
        const int status = deflate(&z, Z_FINISH);
        compressed.resize(z.total_out);
        deflateEnd(&z);
        return status == Z_STREAM_END;
#else
        static_cast<void>(body);
        return false;
#endif
    }
};

OtlpHttpClient::OtlpHttpClient(const OtlpSinkOptions& options, std::string_view content_type)
    : state_(std::make_unique<State>()) {
#if !FIELDLOG_WITH_GZIP
    if (options.compression == OtlpCompression::gzip) {
        throw std::invalid_argument(
            "this build of fieldlog has no gzip: rebuild with -DFIELDLOG_WITH_GZIP=ON (needs zlib: zlib1g-dev)");
    }
#endif
    State& s = *state_;
    if (const std::string problem = parse_endpoint(options.endpoint, s.url.url); !problem.empty()) {
        throw std::invalid_argument("endpoint \"" + options.endpoint + "\": " + problem);
    }
    init_curl_once();
    s.gzip = options.compression == OtlpCompression::gzip;
    s.curl = curl_easy_init();
    s.multi = curl_multi_init();
    if (s.curl == nullptr || s.multi == nullptr) throw std::runtime_error("otlp: libcurl could not make a handle");
    std::string crash_headers = "User-Agent: fieldlog\r\n";  // the crash path's body is not gzipped
    const auto header = [&](const std::string& line, bool on_crash) {
        curl_slist* grown = curl_slist_append(s.headers, line.c_str());
        if (grown == nullptr) throw std::bad_alloc();
        s.headers = grown;
        if (on_crash) crash_headers += line + "\r\n";
    };
    header("Content-Type: " + std::string(content_type), true);
    header("Expect:", false);  // no 100-continue round trip before a large body
    if (s.gzip) header("Content-Encoding: gzip", false);
    for (const auto& [name, value] : options.headers) header(name + ": " + value, true);
    s.crash = crash_post_for(s.url.url, crash_headers);
    CURL* c = s.curl;
    curl_easy_setopt(c, CURLOPT_CURLU, s.url.url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, s.headers);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &State::on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &State::on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s.error);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "fieldlog");
    if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
    if (!options.cert_file.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, options.cert_file.c_str());
    if (!options.key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, options.key_file.c_str());
}

OtlpHttpClient::~OtlpHttpClient() = default;

HttpResult OtlpHttpClient::post(std::string_view body, std::chrono::milliseconds timeout) {
    State& s = *state_;
    if (s.gzip && s.compress(body)) body = s.compressed;
    s.response.clear();
    s.retry_after = -1;
    s.error[0] = '\0';
    CURL* c = s.curl;
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    const long ms = timeout.count() > 0 ? static_cast<long>(timeout.count()) : 1L;
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms);
    HttpResult result;
    const CURLcode code = s.perform();
    if (code != CURLE_OK) {
        result.error = s.error[0] != '\0' ? std::string_view(s.error) : std::string_view(curl_easy_strerror(code));
        return result;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    result.status = static_cast<int>(status);
    if (s.crash) {
        char* ip = nullptr;
        long port = 0;
        curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip);
        curl_easy_getinfo(c, CURLINFO_PRIMARY_PORT, &port);
        s.crash->reached(ip, port);
    }
    result.retry_after = std::chrono::milliseconds(s.retry_after);
    result.body = s.response;
    return result;
}

void OtlpHttpClient::give_up_at(std::chrono::steady_clock::time_point when) noexcept {
    state_->give_up_at.store(when.time_since_epoch().count());
    curl_multi_wakeup(state_->multi);
}

CrashPost* OtlpHttpClient::crash_post() noexcept { return state_->crash.get(); }

}  // namespace fieldlog::detail
