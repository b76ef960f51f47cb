// SPDX-License-Identifier: MIT
// The syslog sessions' shared part: where sending stands in the ring, and the thread's waits.
#include "syslog_session.hpp"

namespace fieldlog::detail {

bool SyslogSession::start(std::chrono::steady_clock::time_point) noexcept {
    sent_ = ring_.released(std::memory_order_relaxed);
    return true;
}

std::uint64_t SyslogSession::rewind() noexcept {
    const std::uint64_t from = ring_.released(std::memory_order_relaxed);
    const std::uint64_t again = ring_.frames_between(from, sent_);
    sent_ = from;
    return again;
}

bool SyslogSession::wait(int timeout_ms) noexcept {
    if (wakeup_.wait(stream_.fd(), timeout_ms)) return take_input();
    return true;
}

bool SyslogSession::sleep(int timeout_ms, bool room_to_send) noexcept {
    wakeup_.announce_sleep();
    if (ring_.head(std::memory_order_seq_cst) != sent_ && room_to_send) {
        wakeup_.end_sleep();
        return true;
    }
    const bool alive = wait(timeout_ms);
    wakeup_.end_sleep();
    return alive;
}

void SyslogSession::release(std::uint64_t position) noexcept {
    if (position == ring_.released(std::memory_order_relaxed)) return;
    ring_.release(position);
    events_.released();
    stream_.reset_backoff();  // the receiver takes records: a later break starts over quickly
}

}  // namespace fieldlog::detail
