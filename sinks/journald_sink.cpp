// SPDX-License-Identifier: MIT
// The journald sink: each typed record's native-protocol entry (journald_entry.hpp) is sent as
// one datagram, or, when too large for one, as a sealed memfd. The last step of the record path;
// the entry's buffers are reused, so a record allocates only to grow them.
#include "fieldlog/sinks/journald_sink.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "journald_entry.hpp"
#include "sink_io.hpp"

namespace fieldlog {
namespace {

// Larger entries go as a memfd: a datagram holds the sender's socket buffer until journald has
// read it, so a few large ones would fill it for everything behind them.
constexpr std::size_t kLargestDatagram = 64 * 1024;
constexpr int kSendBuffer = 8 * 1024 * 1024;  // room for a burst while journald is busy

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

    detail::JournaldEntry entry;

    std::atomic<std::uint64_t> memfd_entries{0};
    detail::ErrorReporter errors;

    void send() noexcept;
    /// 0, or the errno of sending `size` bytes at `data` as one datagram.
    int send_datagram(const char* data, std::size_t size) const noexcept;
    void send_memfd(const char* data, std::size_t size) noexcept;
    void lost(std::string_view operation, int error) noexcept;
};

JournaldSink::State::State(JournaldSink& sink, JournaldSinkOptions opts)
    : owner(sink), options(std::move(opts)),
      entry(options.identifier.empty() ? std::string(program_invocation_short_name) : options.identifier) {
    if (options.socket.empty()) throw std::invalid_argument("journald socket path is empty");
    if (options.socket.size() >= sizeof address.sun_path) {
        throw std::invalid_argument("journald socket path '" + options.socket + "' is longer than " +
                                    std::to_string(sizeof address.sun_path - 1) + " bytes");
    }
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, options.socket.data(), options.socket.size());
    address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + options.socket.size() + 1);

    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket for journald");
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer);  // best effort: wmem_max caps it
}

void JournaldSink::State::lost(std::string_view operation, int error) noexcept {
    owner.count_error();
    owner.count_dropped();
    errors.report("journald", options.socket, operation, error);
}

int JournaldSink::State::send_datagram(const char* data, std::size_t size) const noexcept {
    iovec part{const_cast<char*>(data), size};
    msghdr message{};
    message.msg_name = const_cast<sockaddr_un*>(&address);
    message.msg_namelen = address_length;
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    for (;;) {
        if (::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) return 0;
        if (errno != EINTR) return errno;
    }
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
    message.msg_name = &address;
    message.msg_namelen = address_length;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* const rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &memfd, sizeof memfd);
    int error = 0;
    while (::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) {
            error = errno;
            break;
        }
    }
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
        const int error = send_datagram(bytes.data(), size);
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

void JournaldSink::write(const RecordView& record) { static_cast<void>(record); }

void JournaldSink::write_typed(const TypedRecordView& record) {
    state_->entry.build(record);
    state_->send();
}

void JournaldSink::write_typed_on_crash(const TypedRecordView& record) noexcept {
    // A record this small is built within the buffers' inline room and the reserved field list:
    // no heap. One datagram, no report: the process is ending.
    try {
        state_->entry.build(record);
    } catch (...) {
        return;
    }
    const std::string_view bytes = state_->entry.bytes();
    if (state_->send_datagram(bytes.data(), bytes.size()) != 0) count_dropped();
}

SinkInfo JournaldSink::info() const {
    return {.kind = "journald", .target = state_->options.socket, .format = Format::json, .typed = true};
}

std::uint64_t JournaldSink::memfd_entries() const noexcept {
    return state_->memfd_entries.load(std::memory_order_relaxed);
}

const JournaldSinkOptions& JournaldSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog
