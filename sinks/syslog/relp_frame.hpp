// SPDX-License-Identifier: MIT
// RELP frames for the syslog sink's transport "relp" (rsyslog's imrelp): what the sink sends
// (`TXNR SP COMMAND SP DATALEN [SP DATA] LF`) and the parsing of what the receiver answers
// (`rsp` to each command, the `serverclose` hint). Internal to sinks/; runs on the syslog sink's
// own thread and allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fieldlog::detail {

/// The highest transaction number; the one after it is 1 again (0 is the server's hints).
inline constexpr std::uint32_t kRelpLastTxnr = 999'999'999;
/// Room for "999999999 syslog ", the header the sink puts before a ring frame ("LEN SP MSG").
inline constexpr std::size_t kRelpHeaderCapacity = 24;

/// The transaction number after `txnr`.
[[nodiscard]] constexpr std::uint32_t next_relp_txnr(std::uint32_t txnr) noexcept {
    return txnr == kRelpLastTxnr ? 1 : txnr + 1;
}

/// Writes "TXNR COMMAND " at `out` (room for kRelpHeaderCapacity); returns its end.
char* append_relp_header(char* out, std::uint32_t txnr, std::string_view command) noexcept;

/// One frame the receiver sent; the views point into the parsed input.
struct RelpFrame {
    std::uint32_t txnr = 0;
    std::string_view command;
    std::string_view data;
};

/// The outcome of parse_relp_frame(): `size` bytes make one frame, or more input is needed
/// (size 0), or the input is not RELP (`malformed`).
struct RelpParse {
    std::size_t size = 0;
    bool malformed = false;
};

/// Parses the frame at the start of `input`.
[[nodiscard]] RelpParse parse_relp_frame(std::string_view input, RelpFrame& frame) noexcept;

/// The three-digit status that starts a `rsp` frame's data ("200 OK"), or -1.
[[nodiscard]] int relp_status(std::string_view rsp_data) noexcept;

/// The human-readable text of a `rsp` after its status, up to the first LF.
[[nodiscard]] std::string_view relp_status_text(std::string_view rsp_data) noexcept;

/// Whether the `rsp` to `open` (status line, then one offer a line) offers `command` in its
/// "commands=a,b" offer.
[[nodiscard]] bool relp_offers_command(std::string_view open_rsp_data, std::string_view command) noexcept;

}  // namespace fieldlog::detail
