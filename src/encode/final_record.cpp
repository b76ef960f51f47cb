// SPDX-License-Identifier: MIT
// The `fatal` record naming the signal (see final_record.hpp): its fields on the stack, encoded
// like any record by encode_record.
#include "encode/final_record.hpp"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "encode/encode.hpp"

namespace fieldlog::detail {
namespace {

std::string_view signal_name(int signo) noexcept {
    switch (signo) {
        case SIGSEGV: return "SIGSEGV";
        case SIGABRT: return "SIGABRT";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGTERM: return "SIGTERM";
        case SIGINT: return "SIGINT";
        default: return "signal";
    }
}

/// "0x" and lower-case hex digits, without leading zeros; returns the length.
std::size_t format_address(const void* address, char (&out)[2 + 2 * sizeof(void*)]) noexcept {
    auto value = reinterpret_cast<std::uintptr_t>(address);
    char digits[2 * sizeof(void*)];
    std::size_t n = 0;
    do {
        digits[n++] = "0123456789abcdef"[value & 0xF];
        value >>= 4;
    } while (value != 0);
    out[0] = '0';
    out[1] = 'x';
    for (std::size_t i = 0; i < n; ++i) out[2 + i] = digits[n - 1 - i];
    return 2 + n;
}

}  // namespace

const LoggerCore& final_record_logger() {
    static const LoggerCore* const logger = new LoggerCore("fieldlog");  // never destroyed
    return *logger;
}

void with_final_record(const FinalNote& note, void (*use)(const Record& record, const void* argument),
                       const void* argument) noexcept {
    const std::string_view name = signal_name(note.signo);
    char message[32] = "fatal signal ";
    const std::size_t prefix = std::strlen(message);
    std::memcpy(message + prefix, name.data(), name.size());
    char address[2 + 2 * sizeof(void*)];
    const std::size_t address_length = format_address(note.address, address);

    Field fields[3] = {{"signal", name}, {"signo", note.signo}, {}};
    std::size_t count = 2;
    if (note.fault) fields[count++] = Field{"address", std::string_view(address, address_length)};
    const Message text(std::string_view(message, prefix + name.size()));
    use(Record{note.time, Level::fatal, final_record_logger(), text, nullptr, nullptr, std::span<const Field>(fields, count),
               note.thread_id},
        argument);
}

void encode_final_record(const EncoderOptions& options, Buffer& out, Buffer& scratch, const FinalNote& note) noexcept {
    struct Target {
        const EncoderOptions& options;
        Buffer& out;
        Buffer& scratch;
    } const target{options, out, scratch};
    with_final_record(note, [](const Record& record, const void* argument) {
        const auto& t = *static_cast<const Target*>(argument);
        try {
            encode_record(t.options, t.out, t.scratch, record, {});
        } catch (...) {
            t.out.clear();
        }
    }, &target);
}

}  // namespace fieldlog::detail
