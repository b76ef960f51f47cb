// SPDX-License-Identifier: MIT
// What the syslog sink's two sessions share (octet_counted_session.hpp, relp_session.hpp): on
// one open byte stream, they send the ring's frames from the first one not acknowledged, free
// each frame once the receiver has it, and sleep while there is nothing to do. Internal to
// sinks/; runs on the syslog sink's own thread and allocates nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "byte_stream.hpp"
#include "drain_deadline.hpp"
#include "frame_ring.hpp"
#include "syslog_events.hpp"
#include "syslog_wakeup.hpp"

namespace fieldlog::detail {

/// The parts a session works with, all owned by the sink.
struct SessionParts {
    FrameRing& ring;
    ByteStream& stream;
    SyslogWakeup& wakeup;
    const DrainDeadline& deadline;
    SyslogEvents& events;
};

class SyslogSession : protected BlockedSendHandler {
public:
    explicit SyslogSession(const SessionParts& parts) noexcept
        : ring_(parts.ring), stream_(parts.stream), wakeup_(parts.wakeup), deadline_(parts.deadline), events_(parts.events) {}
    virtual ~SyslogSession() = default;
    SyslogSession(const SyslogSession&) = delete;
    SyslogSession& operator=(const SyslogSession&) = delete;

    /// Whether the protocol's first exchange is answered, which then carries the receiver's
    /// verdict on a TLS client certificate (TlsStream::handshake).
    [[nodiscard]] virtual bool answers_first_exchange() const noexcept = 0;
    /// On a stream just opened: sends from the first frame not acknowledged on; false when the
    /// session could not start (reported; the caller counts it).
    virtual bool start(std::chrono::steady_clock::time_point give_up) noexcept;
    /// One step on the open stream: send what there is, else wait for acknowledgements or new
    /// frames. False when the stream is gone.
    virtual bool step() noexcept = 0;
    /// The stream's last moments, once the sink closes: all acknowledged or the deadline passed.
    virtual void finish() noexcept = 0;
    /// Frees what the receiver acknowledged, as far as the session can tell without waiting.
    virtual void acknowledge() noexcept {}
    /// After the stream ended: the next one starts from the first frame not acknowledged.
    /// Returns how many frames will so be sent again.
    virtual std::uint64_t rewind() noexcept;
    /// Frames sent and not yet answered, for any thread (RELP only).
    [[nodiscard]] virtual std::uint64_t unanswered() const noexcept { return 0; }

protected:
    /// Reads what the receiver sent; false when it closed the connection.
    virtual bool take_input() noexcept = 0;
    /// Waits up to `timeout_ms` (-1: no limit) for a wake-up or for the receiver; false when
    /// the stream is gone.
    bool wait(int timeout_ms) noexcept;
    /// Waits as wait() does unless a frame arrived that `room_to_send` lets the session send.
    bool sleep(int timeout_ms, bool room_to_send) noexcept;
    /// Frees the frames before `position`, which the receiver has.
    void release(std::uint64_t position) noexcept;
    bool send_all(std::string_view data) noexcept { return stream_.send_all(data, *this); }

    FrameRing& ring_;
    ByteStream& stream_;
    SyslogWakeup& wakeup_;
    const DrainDeadline& deadline_;
    SyslogEvents& events_;
    std::uint64_t sent_ = 0;  ///< ring position of the next byte to send
};

}  // namespace fieldlog::detail
