// SPDX-License-Identifier: MIT
// How the syslog sink's thread sleeps and is woken: a logging thread that publishes a frame
// wakes it (an eventfd) only when it sleeps, and every wait of the thread (for the receiver, for
// a connection to open) also ends on that wake-up, so closing the sink cuts it short. Internal
// to sinks/.
#pragma once

#include <atomic>
#include <string>

#include "drain_deadline.hpp"
#include "tls_stream.hpp"

namespace fieldlog::detail {

class SyslogWakeup final : public SocketWaiter {
public:
    /// Throws std::system_error naming `address` when no eventfd can be made.
    SyslogWakeup(DrainDeadline& deadline, const std::string& address);
    ~SyslogWakeup();
    SyslogWakeup(const SyslogWakeup&) = delete;
    SyslogWakeup& operator=(const SyslogWakeup&) = delete;

    /// Any thread: wakes the sink thread if it sleeps.
    void wake() noexcept;
    /// The closing thread: wakes the sink thread whether it sleeps or not.
    void wake_for_close() noexcept;

    /// The sink thread, around a wait for new frames: between the two it must look at the
    /// ring's head once more (with seq_cst) before it waits (FrameRing::head()).
    void announce_sleep() noexcept { sleeping_.store(true, std::memory_order_seq_cst); }
    void end_sleep() noexcept { sleeping_.store(false, std::memory_order_relaxed); }

    /// Waits up to `timeout_ms` (-1: no limit) for a wake-up or for input on `socket` (-1: none);
    /// true when the socket has something to say.
    bool wait(int socket, int timeout_ms) noexcept;
    bool await_socket(int socket, short events, std::chrono::steady_clock::time_point until) noexcept override;

private:
    void signal() noexcept;
    void clear() noexcept;

    DrainDeadline& deadline_;
    std::atomic<bool> sleeping_{false};
    const int fd_;
};

}  // namespace fieldlog::detail
