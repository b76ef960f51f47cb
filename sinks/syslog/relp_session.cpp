// SPDX-License-Identifier: MIT
// The RELP syslog session: the receiver's rsp to each frame frees it.
#include "relp_session.hpp"

#include <poll.h>

#include <charconv>
#include <cstring>

namespace fieldlog::detail {
namespace {

constexpr std::string_view kOffers = "relp_version=0\nrelp_software=fieldlog\ncommands=syslog";

}  // namespace

bool RelpSession::start(std::chrono::steady_clock::time_point give_up) noexcept {
    SyslogSession::start(give_up);
    forget_in_flight();
    received_size_ = 0;
    open_ = false;
    next_txnr_ = 1;
    stream_.await_verdict("RELP open");
    if (!send_command("open", kOffers)) return false;
    while (!open_) {
        if (!wakeup_.await_socket(stream_.fd(), POLLIN | POLLRDHUP, give_up)) {
            events_.report("RELP open", deadline_.passed() ? "the sink closed before the receiver answered (drain_timeout)"
                                                          : "no answer from the receiver");
            return false;
        }
        if (!receive()) return false;
    }
    return true;
}

bool RelpSession::step() noexcept {
    const std::uint64_t until = ring_.head();
    if (sent_ < until && !in_flight_.full()) return send_frames(until);
    // Wait for an answer, or (room in the window) for a new frame.
    return sleep(deadline_.ms_left(), !in_flight_.full());
}

void RelpSession::finish() noexcept {
    if (ring_.released(std::memory_order_relaxed) == ring_.head()) close();
}

std::uint64_t RelpSession::rewind() noexcept {
    forget_in_flight();
    return SyslogSession::rewind();
}

void RelpSession::forget_in_flight() noexcept {
    in_flight_.clear();
    unanswered_.store(0, std::memory_order_relaxed);
}

// --- sending ----------------------------------------------------------------------------------

/// Sends the frames from sent_ on as `TXNR syslog LEN MSG LF` while the window has room,
/// copied together into staging_; a frame larger than staging_ goes alone, in pieces.
bool RelpSession::send_frames(std::uint64_t until) noexcept {
    std::size_t staged = 0;
    while (sent_ < until && !in_flight_.full()) {
        const std::uint64_t end = ring_.frame_end(sent_);
        const RingSlice frame = ring_.slice(sent_, static_cast<std::size_t>(end - sent_));
        char header_bytes[kRelpHeaderCapacity];
        const std::string_view header(
            header_bytes, static_cast<std::size_t>(append_relp_header(header_bytes, next_txnr_, "syslog") - header_bytes));
        if (staged + header.size() + frame.size() + 1 <= staging_.size()) {
            stage(staged, header, frame);
        } else if (staged > 0) {
            break;  // send what is staged; the next step goes on from here
        } else if (!send_alone(header, frame)) {
            return false;
        }
        in_flight_.push(InFlight{next_txnr_, end});
        next_txnr_ = next_relp_txnr(next_txnr_);
        sent_ = end;
    }
    unanswered_.store(in_flight_.size(), std::memory_order_relaxed);
    return staged == 0 || send_all(std::string_view(staging_.data(), staged));
}

void RelpSession::stage(std::size_t& staged, std::string_view header, const RingSlice& frame) noexcept {
    char* out = staging_.data() + staged;
    for (const std::string_view part : {header, frame.first, frame.second}) {
        std::memcpy(out, part.data(), part.size());
        out += part.size();
    }
    *out++ = '\n';
    staged = static_cast<std::size_t>(out - staging_.data());
}

bool RelpSession::send_alone(std::string_view header, const RingSlice& frame) noexcept {
    return send_all(header) && send_all(frame.first) && send_all(frame.second) && send_all("\n");
}

/// Sends one command of our own (open, close) with the next transaction number.
bool RelpSession::send_command(std::string_view command, std::string_view data) noexcept {
    char frame[kRelpHeaderCapacity + 128];
    char* end = append_relp_header(frame, next_txnr_, command);
    end = std::to_chars(end, frame + sizeof frame, data.size()).ptr;
    if (!data.empty()) {  // close has no data, and an empty view's data() may be null
        *end++ = ' ';
        std::memcpy(end, data.data(), data.size());
        end += data.size();
    }
    *end++ = '\n';
    next_txnr_ = next_relp_txnr(next_txnr_);
    return send_all(std::string_view(frame, static_cast<std::size_t>(end - frame)));
}

// --- receiving --------------------------------------------------------------------------------

/// Reads what the receiver sent and takes every whole frame of it; false when it closed the
/// connection or the session (serverclose), or sent what is not RELP.
bool RelpSession::receive() noexcept {
    for (;;) {
        if (received_size_ == received_.size()) {
            events_.report("receive", "a RELP answer longer than the receive buffer");
            return false;
        }
        std::size_t got = 0;
        if (!stream_.receive(received_.data() + received_size_, received_.size() - received_size_, got)) return false;
        if (got == 0) return true;
        received_size_ += got;
        if (!take_whole_frames()) return false;
    }
}

bool RelpSession::take_whole_frames() noexcept {
    std::size_t at = 0;
    for (;;) {
        RelpFrame frame;
        const RelpParse parsed = parse_relp_frame(std::string_view(received_.data() + at, received_size_ - at), frame);
        if (parsed.malformed) {
            events_.count_error();
            events_.report("receive", "the receiver's answer is not a RELP frame");
            return false;
        }
        if (parsed.size == 0) break;
        if (!take_frame(frame)) return false;
        at += parsed.size;
    }
    std::memmove(received_.data(), received_.data() + at, received_size_ - at);
    received_size_ -= at;
    return true;
}

/// One frame from the receiver: the rsp to our oldest command, or the serverclose hint.
bool RelpSession::take_frame(const RelpFrame& frame) noexcept {
    if (frame.txnr == 0 && frame.command == "serverclose") {
        events_.report("receive", "the receiver closed the RELP session (serverclose)");
        return false;
    }
    const int status = frame.command == "rsp" ? relp_status(frame.data) : -1;
    return open_ ? take_answer(frame, status) : take_open_answer(frame, status);
}

/// The one answer awaited before the session is open: the rsp to open, transaction 1.
bool RelpSession::take_open_answer(const RelpFrame& frame, int status) noexcept {
    if (frame.txnr != 1 || status == -1) {
        events_.report("RELP open", "the receiver's answer is not a rsp to open");
        return false;
    }
    if (status != 200) {
        events_.report("RELP open refused", relp_status_text(frame.data));
        return false;
    }
    if (!relp_offers_command(frame.data, "syslog")) {
        events_.report("RELP open", "the receiver does not offer the syslog command");
        return false;
    }
    open_ = true;
    stream_.verdict_given();
    return true;
}

/// The rsp to the oldest frame in flight: frees it, refused or not.
bool RelpSession::take_answer(const RelpFrame& frame, int status) noexcept {
    if (in_flight_.empty() && deadline_.is_set()) return true;  // the rsp to close
    if (status == -1 || in_flight_.empty() || frame.txnr != in_flight_.front().txnr) {
        events_.count_error();
        events_.report("receive", "a RELP answer out of order or not a rsp");
        return false;
    }
    if (status != 200) {
        events_.count_refused();
        events_.report("syslog command refused", relp_status_text(frame.data));
    }
    const std::uint64_t ring_end = in_flight_.front().ring_end;
    in_flight_.pop();
    unanswered_.store(in_flight_.size(), std::memory_order_relaxed);
    release(ring_end);
    return true;
}

/// Every frame answered: sends close and waits (until the drain deadline) for its rsp or for
/// the receiver to close the connection, so it ends the session as one it finished.
void RelpSession::close() noexcept {
    if (!send_command("close", {})) return;
    while (!deadline_.passed()) {
        if (!stream_.await_input(deadline_.ms_left())) return;
        const std::size_t before = received_size_;
        if (!receive() || received_size_ == before) return;
    }
}

}  // namespace fieldlog::detail
