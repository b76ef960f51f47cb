// SPDX-License-Identifier: MIT
// The syslog sink's session for transports relp and relp_tls (rsyslog's imrelp): opens with
// `open` (the receiver must offer the `syslog` command), sends each ring frame as
// `TXNR syslog LEN MSG`, a window of them at a time, and frees a frame when the receiver's `rsp`
// to it arrives; closes with `close` once all are answered. The framing is relp_frame.hpp.
// Internal to sinks/; runs on the syslog sink's own thread.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fixed_queue.hpp"
#include "relp_frame.hpp"
#include "syslog_session.hpp"

namespace fieldlog::detail {

class RelpSession final : public SyslogSession {
public:
    using SyslogSession::SyslogSession;

    [[nodiscard]] bool answers_first_exchange() const noexcept override { return true; }
    /// Sends `open` and waits (until `give_up`, or the drain deadline once closing) for its
    /// rsp, which must be 200 and offer the syslog command.
    bool start(std::chrono::steady_clock::time_point give_up) noexcept override;
    bool step() noexcept override;
    void finish() noexcept override;
    std::uint64_t rewind() noexcept override;
    [[nodiscard]] std::uint64_t unanswered() const noexcept override {
        return unanswered_.load(std::memory_order_relaxed);
    }

private:
    static constexpr std::size_t kWindow = 128;         // frames sent without their rsp (librelp's default)
    static constexpr std::size_t kStaging = 64 * 1024;  // frames copied together into one send
    static constexpr std::size_t kReceive = 16 * 1024;  // the longest answer taken (an open's rsp with its offers)

    /// A frame sent and not yet answered: its transaction number and where it ends in the ring.
    struct InFlight {
        std::uint32_t txnr = 0;
        std::uint64_t ring_end = 0;
    };

    bool take_input() noexcept override { return receive(); }
    // A slow receiver: take its answers meanwhile, so a window of them cannot stall both sides.
    bool on_send_blocked() noexcept override { return receive(); }

    void forget_in_flight() noexcept;
    bool send_frames(std::uint64_t until) noexcept;
    void stage(std::size_t& staged, std::string_view header, const RingSlice& frame) noexcept;
    bool send_alone(std::string_view header, const RingSlice& frame) noexcept;
    bool send_command(std::string_view command, std::string_view data) noexcept;
    bool receive() noexcept;
    bool take_whole_frames() noexcept;
    bool take_frame(const RelpFrame& frame) noexcept;
    bool take_open_answer(const RelpFrame& frame, int status) noexcept;
    bool take_answer(const RelpFrame& frame, int status) noexcept;
    void close() noexcept;

    FixedQueue<InFlight, kWindow> in_flight_;  ///< answered in the order sent
    std::atomic<std::uint64_t> unanswered_{0};  ///< in_flight_'s size, for stats()
    std::uint32_t next_txnr_ = 1;
    bool open_ = false;
    std::array<char, kReceive> received_{};  ///< what arrived and is not parsed yet
    std::size_t received_size_ = 0;
    std::array<char, kStaging> staging_{};
};

}  // namespace fieldlog::detail
