// SPDX-License-Identifier: MIT
// The syslog sink's session for transports tcp and tls (RFC 6587 octet counting, RFC 5425):
// the ring's frames go out as they are, and a frame is freed once the kernel reports every byte
// of it acknowledged by the receiver's TCP (SIOCOUTQ). Over TLS the frames go in chunks of
// whole frames, one TLS record each, and a chunk counts as acknowledged only whole: a record
// the receiver's TCP did not acknowledge whole was not decrypted. Internal to sinks/; runs on
// the syslog sink's own thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "fixed_queue.hpp"
#include "syslog_session.hpp"

namespace fieldlog::detail {

class OctetCountedSession final : public SyslogSession {
public:
    using SyslogSession::SyslogSession;

    [[nodiscard]] bool answers_first_exchange() const noexcept override { return false; }
    bool start(std::chrono::steady_clock::time_point give_up) noexcept override;
    bool step() noexcept override;
    void finish() noexcept override { acknowledge(); }
    void acknowledge() noexcept override;
    std::uint64_t rewind() noexcept override;

private:
    static constexpr std::size_t kTlsChunk = 8 * 1024;  // whole frames per TLS record: well under the most a record holds
    static constexpr std::size_t kChunksInFlight = 4096;

    /// Where a TLS chunk ends, in the connection's byte stream and in the ring.
    struct ChunkEnd {
        std::uint64_t stream_end = 0;
        std::uint64_t ring_end = 0;
    };

    bool take_input() noexcept override { return stream_.discard_input(); }
    bool on_send_blocked() noexcept override;
    bool send_tcp(std::uint64_t until) noexcept;
    bool send_tls(std::uint64_t until) noexcept;
    [[nodiscard]] std::uint64_t tls_chunk_end(std::uint64_t until) const noexcept;
    bool send_tls_chunk(const RingSlice& chunk) noexcept;
    [[nodiscard]] std::uint64_t released_by_tls_chunks(std::uint64_t acked) noexcept;
    [[nodiscard]] std::uint64_t released_by_tcp(std::uint64_t acked) const noexcept;

    std::uint64_t ring_base_ = 0;  ///< TCP: ring position of the connection's first byte
    FixedQueue<ChunkEnd, kChunksInFlight> chunks_;
    std::array<char, kTlsChunk> scratch_{};  ///< a TLS chunk that wraps around the ring's end
};

}  // namespace fieldlog::detail
