// SPDX-License-Identifier: MIT
// The UDP sink: each record becomes one message of a batch (one sendmmsg(2) call on Linux, a
// sendmsg(2) each elsewhere: base/platform.hpp), as iovecs pointing at the record's bytes
// (plus, for RFC 5424, a per-message head and the fixed header tail), so nothing is copied
// unless a record must be cut to fit. Re-resolution runs on the background thread, off the
// record path, and connects to a new address under the sink's mutex().
#include "fieldlog/sinks/udp_sink.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include "base/platform.hpp"
#include "base/ticker.hpp"
#include "sinks/common/address.hpp"
#include "sinks/common/sink_io.hpp"
#include "sinks/common/syslog_header.hpp"

namespace fieldlog {
namespace {

constexpr std::size_t kBatch = 64;            // messages per batch
constexpr std::size_t kMaxDatagram = 65507;   // IPv4's largest UDP payload
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
// A new address waits at most this long for the writer to let go of the sink's mutex; then it
// is taken at the next resolution.
constexpr int kHandOverAttempts = 100;
constexpr auto kHandOverRetry = std::chrono::microseconds(100);

#if FIELDLOG_LINUX_FACILITIES
using Datagram = mmsghdr;

/// Sends `datagrams` until the first that fails: how many went, or -1 (errno) if none did.
int send_datagrams(int fd, Datagram* datagrams, std::size_t count) noexcept {
    return ::sendmmsg(fd, datagrams, static_cast<unsigned>(count), MSG_DONTWAIT | MSG_NOSIGNAL);
}
#else
struct Datagram {
    msghdr msg_hdr;
};

int send_datagrams(int fd, Datagram* datagrams, std::size_t count) noexcept {
    std::size_t sent = 0;
    while (sent < count && ::sendmsg(fd, &datagrams[sent].msg_hdr, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) ++sent;
    return sent > 0 ? static_cast<int>(sent) : -1;
}
#endif

/// Length of the JSON string unit (escape, UTF-8 sequence or byte) that starts at `p`.
std::size_t unit_length(std::string_view s, std::size_t p) noexcept {
    const auto c = static_cast<unsigned char>(s[p]);
    if (c == '\\') {
        if (p + 1 < s.size() && s[p + 1] == 'u') {
            // A surrogate pair (\uD8xx\uDCxx) is one character: never split it.
            const bool high = p + 5 < s.size() && (s[p + 2] == 'd' || s[p + 2] == 'D') &&
                              std::string_view("89abAB").find(s[p + 3]) != std::string_view::npos;
            return high && p + 7 < s.size() && s[p + 6] == '\\' && s[p + 7] == 'u' ? 12 : 6;
        }
        return 2;
    }
    if (c >= 0xF0) return 4;
    if (c >= 0xE0) return 3;
    if (c >= 0xC0) return 2;
    return 1;
}

/// The oversize rule for JSON (see UdpSink): writes the cut line to `out` and returns its size,
/// or 0 when the line cannot be made to fit in `budget` bytes that way.
std::size_t truncate_json(std::string_view json, std::size_t budget, char* out) noexcept {
    if (json.size() < 2 || json.front() != '{' || json.back() != '}') return 0;
    // Find the longest string value (a string not followed by ':').
    std::size_t best_start = 0;
    std::size_t best_end = 0;
    for (std::size_t i = 0; i < json.size(); ++i) {
        if (json[i] != '"') continue;
        const std::size_t start = i + 1;
        std::size_t end = start;
        while (end < json.size() && json[end] != '"') end += json[end] == '\\' ? 2 : 1;
        if (end + 1 >= json.size()) return 0;  // unterminated: not ours to repair
        if (json[end + 1] != ':' && end - start > best_end - best_start) {
            best_start = start;
            best_end = end;
        }
        i = end;
    }
    if (best_end == best_start) return 0;

    char suffix[40] = ",\"_truncated\":";
    std::size_t suffix_size = std::strlen(suffix);
    suffix_size = static_cast<std::size_t>(
        std::to_chars(suffix + suffix_size, suffix + sizeof suffix, json.size()).ptr - suffix);
    const std::size_t rest = json.size() - 1 - best_end;  // closing quote .. before the final '}'
    const std::size_t fixed = kEllipsis.size() + rest + suffix_size + 1;
    if (fixed + best_start > budget) return 0;
    const std::size_t limit = budget - fixed;  // the cut may be at most here

    std::size_t cut = best_start;
    for (std::size_t p = best_start; p < best_end;) {
        const std::size_t next = p + unit_length(json, p);
        if (next > limit || next > best_end) break;
        cut = next;
        p = next;
    }
    char* o = out;
    o = std::copy_n(json.data(), cut, o);
    o = std::copy(kEllipsis.begin(), kEllipsis.end(), o);
    o = std::copy_n(json.data() + best_end, rest, o);
    o = std::copy_n(suffix, suffix_size, o);
    *o++ = '}';
    return static_cast<std::size_t>(o - out);
}

}  // namespace

struct UdpSink::State final : detail::Tickable {
    State(UdpSink& sink, UdpSinkOptions opts);
    ~State() {
        if (fd >= 0) ::close(fd);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    UdpSink& owner;
    const UdpSinkOptions options;
    detail::HostPort where;
    int fd = -1;
    detail::Endpoint endpoint;
    bool ticking = false;

    detail::Endpoint resolved;  ///< the resolver's last answer taken (background thread only)

    detail::SyslogTail tail;   ///< RFC 5424: "HOSTNAME APP-NAME PROCID - - "
    std::string_view tail_now;  ///< tail.current() for the batch being sent

    // One batch, allocated once.
    std::array<Datagram, kBatch> messages{};
    std::array<iovec, kBatch * 3> iov{};
    std::array<std::array<char, detail::kSyslogHeadCapacity>, kBatch> heads{};
    std::unique_ptr<char[]> cut_buffer;  ///< one record cut to fit (sent alone)

    std::atomic<std::uint64_t> truncated{0};
    detail::ErrorReporter errors;

    void connect_to(const detail::Endpoint& target);
    void send(std::span<const RecordView> records) noexcept;
    std::size_t prepare(const RecordView& record, std::size_t slot, char* cut_into) noexcept;
    void flush_batch(std::size_t count) noexcept;
    void report(std::string_view operation, int error) noexcept { errors.report("udp", options.address, operation, error); }

    void tick(std::chrono::steady_clock::time_point now) noexcept override;
};

UdpSink::State::State(UdpSink& sink, UdpSinkOptions opts)
    : owner(sink), options(std::move(opts)), tail(options.hostname, options.app_name) {
    if (options.max_datagram > kMaxDatagram) {
        throw std::invalid_argument("max_datagram " + std::to_string(options.max_datagram) + " is over 65507");
    }
    if (options.facility < 0 || options.facility > 23) {
        throw std::invalid_argument("facility " + std::to_string(options.facility) + " is not 0-23");
    }
    where = detail::split_address(options.address);
    const bool literal = detail::resolve(where, SOCK_DGRAM, AI_NUMERICHOST, endpoint) == 0;
    if (!literal) {
        if (const int rc = detail::resolve(where, SOCK_DGRAM, 0, endpoint); rc != 0) {
            throw std::invalid_argument("cannot resolve '" + options.address + "': " + ::gai_strerror(rc));
        }
    }
    resolved = endpoint;
    connect_to(endpoint);

    const std::size_t smallest =
        (options.framing == UdpFraming::rfc5424 ? detail::kSyslogHeadCapacity + tail.last().size() : 0) + 64;
    if (options.max_datagram < smallest) {
        throw std::invalid_argument("max_datagram " + std::to_string(options.max_datagram) +
                                    " leaves no room for a record; use at least " + std::to_string(smallest));
    }
    cut_buffer = std::make_unique<char[]>(options.max_datagram);
    ticking = !literal && options.resolve_interval.count() > 0;
}

void UdpSink::State::connect_to(const detail::Endpoint& target) {
    const int family = target.address.ss_family;
    if (fd < 0 || endpoint.address.ss_family != family) {
        const int made = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (made < 0) throw std::system_error(errno, std::generic_category(), "socket for " + options.address);
        if (fd >= 0) ::close(fd);
        fd = made;
    }
    // Connected: no per-send route lookup, and a missing receiver shows up as ECONNREFUSED.
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&target.address), target.length) != 0) {
        const int error = errno;
        ::close(fd);
        fd = -1;
        throw std::system_error(error, std::generic_category(), "connect to " + options.address);
    }
    endpoint = target;
}

void UdpSink::State::tick(std::chrono::steady_clock::time_point) noexcept {
    detail::Endpoint fresh;
    if (const int rc = detail::resolve(where, SOCK_DGRAM, 0, fresh); rc != 0) {
        owner.count_error();
        report("resolve", rc == EAI_SYSTEM ? errno : EHOSTUNREACH);
        return;
    }
    if (fresh.same_as(resolved)) return;
    SinkMutex& mutex = owner.mutex();
    for (int attempt = 0; !mutex.try_lock(); ++attempt) {
        if (attempt == kHandOverAttempts) return;  // `resolved` unchanged: taken next time
        std::this_thread::sleep_for(kHandOverRetry);
    }
    try {
        connect_to(fresh);
        resolved = fresh;
    } catch (const std::system_error& e) {
        owner.count_error();
        report("connect", e.code().value());
    }
    mutex.unlock();
}

/// Fills message `slot` for `record`; returns its datagram size, or 0 when it is dropped.
/// A record that must be cut is written to `cut_into`.
std::size_t UdpSink::State::prepare(const RecordView& record, std::size_t slot, char* cut_into) noexcept {
    std::string_view line(record.bytes.data(), record.bytes.size());
    if (line.ends_with('\n')) line.remove_suffix(1);
    iovec* parts = &iov[slot * 3];
    int count = 0;
    std::size_t header = 0;
    if (options.framing == UdpFraming::rfc5424) {
        char* head = heads[slot].data();
        char* const o = detail::append_syslog_head(head, options.facility, record.level, record.time);
        parts[count++] = iovec{head, static_cast<std::size_t>(o - head)};
        parts[count++] = iovec{const_cast<char*>(tail_now.data()), tail_now.size()};
        header = static_cast<std::size_t>(o - head) + tail_now.size();
    }
    if (header + line.size() > options.max_datagram) {
        const std::size_t cut = options.oversize == OversizePolicy::truncate
                                    ? truncate_json(line, options.max_datagram - header, cut_into)
                                    : 0;
        if (cut == 0) {
            owner.count_dropped();
            return 0;
        }
        truncated.fetch_add(1, std::memory_order_relaxed);
        line = std::string_view(cut_into, cut);
    }
    parts[count++] = iovec{const_cast<char*>(line.data()), line.size()};
    messages[slot].msg_hdr = msghdr{};
    messages[slot].msg_hdr.msg_iov = parts;
    messages[slot].msg_hdr.msg_iovlen = static_cast<std::size_t>(count);
    return header + line.size();
}

void UdpSink::State::flush_batch(std::size_t count) noexcept {
    std::size_t start = 0;
    while (start < count) {
        const int sent = send_datagrams(fd, &messages[start], count - start);
        if (sent > 0) {
            start += static_cast<std::size_t>(sent);
            continue;
        }
        const int error = sent < 0 ? errno : EIO;
        if (error == EINTR) continue;
        owner.count_error();
        report("send", error);
        if (error == EAGAIN || error == EWOULDBLOCK || error == ENOBUFS) {  // the buffer is full: the rest would fail too
            owner.count_dropped(count - start);
            return;
        }
        owner.count_dropped();  // e.g. ECONNREFUSED: this one is lost, the next may go
        ++start;
    }
}

void UdpSink::State::send(std::span<const RecordView> records) noexcept {
    if (fd < 0) {
        owner.count_dropped(records.size());
        return;
    }
    if (options.framing == UdpFraming::rfc5424) tail_now = tail.current();
    const std::size_t header_bound =
        options.framing == UdpFraming::rfc5424 ? detail::kSyslogHeadCapacity + tail_now.size() : 0;
    std::size_t count = 0;
    for (const RecordView& record : records) {
        const bool must_cut = record.bytes.size() + header_bound > options.max_datagram;
        if (must_cut && count > 0) {  // the cut buffer holds one record: send it on its own
            flush_batch(count);
            count = 0;
        }
        if (prepare(record, count, cut_buffer.get()) == 0) continue;
        ++count;
        if (count == kBatch || must_cut) {
            flush_batch(count);
            count = 0;
        }
    }
    if (count > 0) flush_batch(count);
}

UdpSink::UdpSink(UdpSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {
    if (state_->ticking) {
        detail::add_ticking(state_.get(), std::chrono::duration_cast<std::chrono::milliseconds>(state_->options.resolve_interval));
    }
}

UdpSink::~UdpSink() {
    if (state_->ticking) detail::remove_ticking(state_.get());
}

SinkInfo UdpSink::info() const { return {.kind = "udp", .target = state_->options.address}; }

void UdpSink::write(const RecordView& record) { state_->send({&record, 1}); }

void UdpSink::write_batch(std::span<const RecordView> records) { state_->send(records); }

void UdpSink::write_on_crash(std::span<const RecordView> records) noexcept {
    const State& s = *state_;
    if (s.fd < 0) return;
    char head[16];
    char* const o = detail::append_syslog_crash_head(head, s.options.facility);
    const std::string_view tail = s.tail.last();
    const bool syslog = s.options.framing == UdpFraming::rfc5424;
    for (const RecordView& record : records) {
        std::size_t size = record.bytes.size();
        if (size > 0 && record.bytes[size - 1] == '\n') --size;
        iovec parts[3] = {{head, static_cast<std::size_t>(o - head)},
                          {const_cast<char*>(tail.data()), tail.size()},
                          {const_cast<char*>(record.bytes.data()), size}};
        if ((syslog ? parts[0].iov_len + parts[1].iov_len : 0) + size > s.options.max_datagram) continue;
        msghdr message{};
        message.msg_iov = syslog ? parts : parts + 2;
        message.msg_iovlen = syslog ? 3 : 1;
        ::sendmsg(s.fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
}

std::uint64_t UdpSink::truncated() const noexcept { return state_->truncated.load(std::memory_order_relaxed); }

const UdpSinkOptions& UdpSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog
