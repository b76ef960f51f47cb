// SPDX-License-Identifier: MIT
// The journald sink: each record's native-protocol entry (journald_entry.hpp) is sent as
// one datagram, or, when too large for one, as a sealed memfd, waiting for room in journald's
// queue within a bound. The last step of the record path; the entry's buffers are reused, so a
// record allocates only to grow them.
#include "fieldlog/sinks/journald_sink.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "base/platform.hpp"
#include "journald_entry.hpp"
#include "sinks/common/sink_io.hpp"

namespace fieldlog {
namespace {

// Larger entries go as a memfd: a datagram holds the sender's socket buffer until journald has
// read it, so a few large ones would fill it for everything behind them.
constexpr std::size_t kLargestDatagram = 64 * 1024;
constexpr int kSendBuffer = 8 * 1024 * 1024;  // libsystemd's: room for large entries while journald is busy
// The final path ends the process within a few seconds whatever a sink does (signals.cpp's
// alarm); a wait for a busy journald leaves it the rest.
constexpr std::chrono::milliseconds kLongestCrashWait{1000};

/// Raises the send buffer as libsystemd does: SO_SNDBUF, which net.core.wmem_max caps, then,
/// when the kernel granted less, SO_SNDBUFFORCE, which a process with CAP_NET_ADMIN may use
/// past the cap. Best effort: a smaller buffer only makes large entries wait sooner.
void raise_send_buffer(int fd) noexcept {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer);
    int granted = 0;
    socklen_t length = sizeof granted;
    // The kernel doubles the size asked for (its bookkeeping), so a full grant reads twice it.
    if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &granted, &length) == 0 && granted >= 2 * kSendBuffer) return;
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &kSendBuffer, sizeof kSendBuffer);
}

/// journald's socket is gone from under the connection: it stopped, or restarted with a new
/// socket at the same path.
bool journald_gone(int error) noexcept { return error == ECONNREFUSED || error == ENOTCONN || error == ECONNRESET; }

}  // namespace

struct JournaldSink::State {
    State(JournaldSink& sink, JournaldSinkOptions opts);
    ~State() {
        if (fd >= 0) ::close(fd);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    JournaldSink& owner;
    const JournaldSinkOptions options;
    sockaddr_un address{};
    socklen_t address_length = 0;
    int fd = -1;
    bool connected = false;
    // A wait for room ran out and journald has taken nothing since: records drop without
    // waiting, so a wedged journald costs the bound once, not once per record. Read by the
    // crash path without the sink's lock.
    std::atomic<bool> wedged{false};

    detail::JournaldEntry entry;

    std::atomic<std::uint64_t> memfd_entries{0};
    detail::ErrorReporter errors;

    void send() noexcept;
    /// 0, or the errno why journald did not take `message` (ETIMEDOUT: no room within
    /// `longest_wait`). Connects first where not connected, and once more when journald turns
    /// out gone. Async-signal-safe.
    int deliver(const msghdr& message, std::chrono::milliseconds longest_wait) noexcept;
    /// sendmsg(); while journald's queue is full and `wait` holds, poll() for room until `deadline`.
    int send_until(const msghdr& message, bool wait, std::chrono::steady_clock::time_point deadline) const noexcept;
    /// 0, or the errno of sending `size` bytes at `data` as one datagram.
    int send_datagram(const char* data, std::size_t size, std::chrono::milliseconds longest_wait) noexcept;
    void send_memfd(const char* data, std::size_t size) noexcept;
    void lost(std::string_view operation, int error) noexcept;
};

JournaldSink::State::State(JournaldSink& sink, JournaldSinkOptions opts)
    : owner(sink), options(std::move(opts)),
      entry(options.identifier.empty() ? std::string(detail::program_name()) : options.identifier) {
    if (options.socket.empty()) throw std::invalid_argument("journald socket path is empty");
    if (options.socket.size() >= sizeof address.sun_path) {
        throw std::invalid_argument("journald socket path '" + options.socket + "' is longer than " +
                                    std::to_string(sizeof address.sun_path - 1) + " bytes");
    }
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, options.socket.data(), options.socket.size());
    address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + options.socket.size() + 1);
    if (options.wait_timeout <= std::chrono::milliseconds::zero()) {
        throw std::invalid_argument("journald wait_timeout must be above 0 (when_full = drop never waits)");
    }

    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket for journald");
    raise_send_buffer(fd);
}

void JournaldSink::State::lost(std::string_view operation, int error) noexcept {
    owner.count_error();
    owner.count_dropped();
    if (error != ETIMEDOUT) {
        errors.report("journald", options.socket, operation, error);
        return;
    }
    char reason[160];
    const auto written = fmt::format_to_n(reason, sizeof reason,
                                          "no room for {} ms (journald stopped or wedged); records are dropped "
                                          "without waiting until it takes one",
                                          options.wait_timeout.count());
    errors.report("journald", options.socket, operation, std::string_view(reason, written.size));
}

int JournaldSink::State::send_until(const msghdr& message, bool wait,
                                    std::chrono::steady_clock::time_point deadline) const noexcept {
    for (;;) {
        if (::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) return 0;
        const int error = errno;
        if (error == EINTR) continue;
        if (error != EAGAIN || !wait) return error;
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) return ETIMEDOUT;
        // Whole milliseconds, rounded up: a wait never ends just short of the deadline.
        pollfd room{fd, POLLOUT, 0};
        ::poll(&room, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count()));
    }
}

int JournaldSink::State::deliver(const msghdr& message, std::chrono::milliseconds longest_wait) noexcept {
    const bool wait = options.when_full == JournaldWhenFull::wait && !wedged.load(std::memory_order_relaxed);
    const auto deadline = std::chrono::steady_clock::now() + longest_wait;
    for (int attempt = 0;; ++attempt) {
        if (!connected) {
            if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), address_length) != 0) return errno;
            connected = true;
        }
        const int error = send_until(message, wait, deadline);
        if (error == 0) {
            wedged.store(false, std::memory_order_relaxed);
            return 0;
        }
        if (error == ETIMEDOUT) wedged.store(true, std::memory_order_relaxed);
        if (!journald_gone(error) || attempt > 0) return error;
        connected = false;
    }
}

int JournaldSink::State::send_datagram(const char* data, std::size_t size, std::chrono::milliseconds longest_wait) noexcept {
    iovec part{const_cast<char*>(data), size};
    msghdr message{};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    return deliver(message, longest_wait);
}

void JournaldSink::State::send_memfd(const char* data, std::size_t size) noexcept {
    const int memfd = ::memfd_create("fieldlog-journal-entry", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd < 0) {
        lost("memfd_create", errno);
        return;
    }
    for (std::size_t written = 0; written < size;) {
        const ssize_t n = ::write(memfd, data + written, size - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            lost("write to memfd", n < 0 ? errno : EIO);
            ::close(memfd);
            return;
        }
        written += static_cast<std::size_t>(n);
    }
    // journald takes a memfd only once it can no longer change under it.
    if (::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        lost("seal memfd", errno);
        ::close(memfd);
        return;
    }
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* const rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &memfd, sizeof memfd);
    const int error = deliver(message, options.wait_timeout);
    ::close(memfd);
    if (error != 0) {
        lost("send memfd", error);
        return;
    }
    memfd_entries.fetch_add(1, std::memory_order_relaxed);
}

void JournaldSink::State::send() noexcept {
    const std::string_view bytes = entry.bytes();
    const std::size_t size = bytes.size();
    if (size <= kLargestDatagram) {
        const int error = send_datagram(bytes.data(), size, options.wait_timeout);
        if (error == 0) return;
        if (error != EMSGSIZE) {
            lost("send", error);
            return;
        }
    }
    send_memfd(bytes.data(), size);
}

JournaldSink::JournaldSink(JournaldSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {}

JournaldSink::~JournaldSink() = default;

void JournaldSink::write(const RecordView& record) {
    state_->entry.build(record);
    state_->send();
}

void JournaldSink::write_on_crash(std::span<const RecordView> records) noexcept {
    // The crash path's records are small enough to be built within the buffers' inline room and
    // the reserved field list: no heap. One datagram each, no report: the process is ending.
    for (const RecordView& record : records) {
        try {
            state_->entry.build(record);
        } catch (...) {
            continue;
        }
        const std::string_view bytes = state_->entry.bytes();
        const auto longest_wait = std::min(state_->options.wait_timeout, kLongestCrashWait);
        if (state_->send_datagram(bytes.data(), bytes.size(), longest_wait) != 0) count_dropped();
    }
}

SinkInfo JournaldSink::info() const {
    return {.kind = "journald", .target = state_->options.socket, .format = Format::json, .lines = false};
}

std::uint64_t JournaldSink::memfd_entries() const noexcept {
    return state_->memfd_entries.load(std::memory_order_relaxed);
}

const JournaldSinkOptions& JournaldSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog
