// SPDX-License-Identifier: MIT
// The octet-counted syslog session over TCP or TLS: sending the ring's bytes, freeing them as
// the receiver's TCP acknowledges them.
#include "octet_counted_session.hpp"

#include <algorithm>
#include <cstring>

namespace fieldlog::detail {
namespace {

constexpr int kAckPollMs = 2;                  // while bytes are unacknowledged, SIOCOUTQ is read this often
constexpr std::size_t kTcpChunk = 256 * 1024;  // bytes per sendmsg

}  // namespace

bool OctetCountedSession::start(std::chrono::steady_clock::time_point give_up) noexcept {
    SyslogSession::start(give_up);
    ring_base_ = sent_;
    chunks_.clear();
    return true;
}

bool OctetCountedSession::step() noexcept {
    acknowledge();
    const std::uint64_t until = ring_.head();
    if (sent_ < until && !chunks_.full()) return stream_.tls() ? send_tls(until) : send_tcp(until);
    if (ring_.released(std::memory_order_relaxed) != sent_ || chunks_.full()) return wait(kAckPollMs);
    if (deadline_.is_set()) return true;  // all acknowledged while closing: the sink's thread decides
    return sleep(-1, true);
}

std::uint64_t OctetCountedSession::rewind() noexcept {
    chunks_.clear();
    return SyslogSession::rewind();
}

// A slow receiver: let the callers have the room its TCP freed meanwhile.
bool OctetCountedSession::on_send_blocked() noexcept {
    acknowledge();
    return true;
}

bool OctetCountedSession::send_tcp(std::uint64_t until) noexcept {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(until - sent_, kTcpChunk));
    std::size_t sent = 0;
    if (!stream_.send_some(ring_.slice(sent_, size), sent)) return false;
    sent_ += sent;
    return true;
}

bool OctetCountedSession::send_tls(std::uint64_t until) noexcept {
    const std::uint64_t end = tls_chunk_end(until);
    if (!send_tls_chunk(ring_.slice(sent_, static_cast<std::size_t>(end - sent_)))) return false;
    chunks_.push(ChunkEnd{stream_.pushed(), end});
    sent_ = end;
    return true;
}

/// Whole frames from sent_ on, at most one TLS record's worth unless one frame is larger.
std::uint64_t OctetCountedSession::tls_chunk_end(std::uint64_t until) const noexcept {
    const std::size_t limit = std::min(kTlsChunk, stream_.max_record());
    std::uint64_t end = ring_.frame_end(sent_);
    while (end < until) {
        const std::uint64_t next = ring_.frame_end(end);
        if (next - sent_ > limit) break;
        end = next;
    }
    return end;
}

/// One chunk as one TLS record: a chunk that wraps around the ring's end is copied together
/// first, unless it is larger than a record anyway.
bool OctetCountedSession::send_tls_chunk(const RingSlice& chunk) noexcept {
    if (chunk.second.empty()) return send_all(chunk.first);
    if (chunk.size() > scratch_.size()) return send_all(chunk.first) && send_all(chunk.second);
    std::memcpy(scratch_.data(), chunk.first.data(), chunk.first.size());
    std::memcpy(scratch_.data() + chunk.first.size(), chunk.second.data(), chunk.second.size());
    return send_all(std::string_view(scratch_.data(), chunk.size()));
}

void OctetCountedSession::acknowledge() noexcept {
    std::uint64_t acked = 0;
    if (!stream_.acknowledged(acked)) return;
    release(stream_.tls() ? released_by_tls_chunks(acked) : released_by_tcp(acked));
}

/// The end of the last chunk whose every byte the receiver's TCP acknowledged.
std::uint64_t OctetCountedSession::released_by_tls_chunks(std::uint64_t acked) noexcept {
    std::uint64_t free_to = ring_.released(std::memory_order_relaxed);
    while (!chunks_.empty() && chunks_.front().stream_end <= acked) {
        free_to = chunks_.front().ring_end;
        chunks_.pop();
    }
    return free_to;
}

/// Plain TCP: the stream is the ring's bytes from ring_base_ on; the end of the last frame
/// acknowledged whole.
std::uint64_t OctetCountedSession::released_by_tcp(std::uint64_t acked) const noexcept {
    const std::uint64_t acked_in_ring = ring_base_ + acked;
    std::uint64_t free_to = ring_.released(std::memory_order_relaxed);
    while (free_to < acked_in_ring) {
        const std::uint64_t end = ring_.frame_end(free_to);
        if (end > acked_in_ring) break;
        free_to = end;
    }
    return free_to;
}

}  // namespace fieldlog::detail
