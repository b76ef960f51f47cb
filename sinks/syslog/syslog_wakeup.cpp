// SPDX-License-Identifier: MIT
// The syslog sink thread's sleep and wake-up, over an eventfd.
#include "syslog_wakeup.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace fieldlog::detail {
namespace {

int make_eventfd(const std::string& address) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd for " + address);
    return fd;
}

}  // namespace

SyslogWakeup::SyslogWakeup(DrainDeadline& deadline, const std::string& address)
    : deadline_(deadline), fd_(make_eventfd(address)) {}

SyslogWakeup::~SyslogWakeup() { ::close(fd_); }

void SyslogWakeup::wake() noexcept {
    if (!sleeping_.load(std::memory_order_seq_cst)) return;
    if (sleeping_.exchange(false, std::memory_order_seq_cst)) signal();
}

void SyslogWakeup::wake_for_close() noexcept { signal(); }

void SyslogWakeup::signal() noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t rc = ::write(fd_, &one, sizeof one);
}

void SyslogWakeup::clear() noexcept {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t rc = ::read(fd_, &count, sizeof count);
}

bool SyslogWakeup::wait(int socket, int timeout_ms) noexcept {
    pollfd watched[2] = {{fd_, POLLIN, 0}, {socket, POLLIN | POLLRDHUP, 0}};
    const int ready = ::poll(watched, socket >= 0 ? 2 : 1, timeout_ms);
    if (ready <= 0) return false;
    if ((watched[0].revents & POLLIN) != 0) clear();
    return socket >= 0 && watched[1].revents != 0;
}

bool SyslogWakeup::await_socket(int socket, short events, std::chrono::steady_clock::time_point until) noexcept {
    for (;;) {
        deadline_.notice();
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(std::min(until, deadline_.at()) - std::chrono::steady_clock::now())
                .count();
        if (left <= 0) return false;
        pollfd watched[2] = {{socket, events, 0}, {fd_, POLLIN, 0}};
        if (::poll(watched, 2, static_cast<int>(left)) < 0 && errno != EINTR) return false;
        if ((watched[1].revents & POLLIN) != 0) clear();  // perhaps closing: notice() looks
        if (watched[0].revents != 0) return true;
    }
}

}  // namespace fieldlog::detail
