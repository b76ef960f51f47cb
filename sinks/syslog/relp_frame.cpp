// SPDX-License-Identifier: MIT
// RELP framing (librelp's doc/relp.md): parsing what a receiver answers, the header of what
// the syslog sink sends.
#include "relp_frame.hpp"

#include <charconv>
#include <cstring>

namespace fieldlog::detail {
namespace {

constexpr std::size_t kMaxDigits = 9;   // TXNR and DATALEN: 1*9DIGIT
constexpr std::size_t kMaxCommand = 32; // COMMAND: 1*32ALPHA

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// Reads 1..9 digits from `input` at `at`. Returns false for malformed input; `complete` is
/// false when the input ends before a character that is not a digit.
bool read_number(std::string_view input, std::size_t& at, std::uint64_t& value, bool& complete) noexcept {
    const std::size_t start = at;
    value = 0;
    while (at < input.size() && is_digit(input[at])) {
        if (at - start == kMaxDigits) return false;
        value = value * 10 + static_cast<std::uint64_t>(input[at] - '0');
        ++at;
    }
    complete = at < input.size();
    return !complete || at > start;
}

}  // namespace

char* append_relp_header(char* out, std::uint32_t txnr, std::string_view command) noexcept {
    out = std::to_chars(out, out + kMaxDigits, txnr).ptr;
    *out++ = ' ';
    std::memcpy(out, command.data(), command.size());
    out += command.size();
    *out++ = ' ';
    return out;
}

RelpParse parse_relp_frame(std::string_view input, RelpFrame& frame) noexcept {
    std::size_t at = 0;
    bool complete = false;
    std::uint64_t txnr = 0;
    if (!read_number(input, at, txnr, complete)) return {.malformed = true};
    if (!complete) return {};
    if (input[at] != ' ') return {.malformed = true};
    const std::size_t command_start = ++at;
    while (at < input.size() && is_alpha(input[at])) {
        if (at - command_start == kMaxCommand) return {.malformed = true};
        ++at;
    }
    if (at == input.size()) return {};
    if (at == command_start || input[at] != ' ') return {.malformed = true};
    const std::string_view command = input.substr(command_start, at - command_start);
    ++at;
    std::uint64_t length = 0;
    if (!read_number(input, at, length, complete)) return {.malformed = true};
    if (!complete) return {};
    std::size_t data_start = at;
    if (length > 0) {
        if (input[at] != ' ') return {.malformed = true};
        data_start = at + 1;
    }
    const std::size_t trailer = data_start + length;
    if (trailer >= input.size()) return {};
    if (input[trailer] != '\n') return {.malformed = true};
    frame = {.txnr = static_cast<std::uint32_t>(txnr), .command = command, .data = input.substr(data_start, length)};
    return {.size = trailer + 1};
}

int relp_status(std::string_view rsp_data) noexcept {
    if (rsp_data.size() < 3 || !is_digit(rsp_data[0]) || !is_digit(rsp_data[1]) || !is_digit(rsp_data[2])) return -1;
    if (rsp_data.size() > 3 && rsp_data[3] != ' ' && rsp_data[3] != '\n') return -1;
    return (rsp_data[0] - '0') * 100 + (rsp_data[1] - '0') * 10 + (rsp_data[2] - '0');
}

std::string_view relp_status_text(std::string_view rsp_data) noexcept {
    std::string_view text = rsp_data.substr(0, rsp_data.find('\n'));
    return text.size() > 4 ? text.substr(4) : std::string_view{};
}

bool relp_offers_command(std::string_view open_rsp_data, std::string_view command) noexcept {
    constexpr std::string_view kOffer = "commands=";
    std::string_view rest = open_rsp_data;
    while (!rest.empty()) {
        const std::size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
        if (!line.starts_with(kOffer)) continue;
        line.remove_prefix(kOffer.size());
        while (!line.empty()) {
            const std::size_t comma = line.find(',');
            if (line.substr(0, comma) == command) return true;
            if (comma == std::string_view::npos) break;
            line.remove_prefix(comma + 1);
        }
    }
    return false;
}

}  // namespace fieldlog::detail
