// SPDX-License-Identifier: MIT
// The `fatal` record naming the signal (see final_record.hpp), with the crashing thread's frames
// and std::terminate's exception: its fields in storage of its own, encoded like any record by
// encode_record.
#include "encode/final_record.hpp"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "encode/encode.hpp"
#include "fieldlog/field.hpp"

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

constexpr std::size_t kHexRoom = 2 + 2 * sizeof(void*);
// A line of stacktrace_text at its longest: number, address, function, module and offset.
constexpr std::size_t kStacktraceLine = 4 + kHexRoom + 4 + kMaxCrashNameSize + 2 + kMaxCrashNameSize + 1 + kHexRoom + 2;
constexpr std::size_t kStacktraceRoom = kMaxCrashFrames * kStacktraceLine + 4;

/// "0x" and lower-case hex digits, without leading zeros; returns the length.
std::size_t format_hex(std::uintptr_t value, char (&out)[kHexRoom]) noexcept {
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

// The record's own storage, too large for the alternate signal stack: only one final path runs.
Field g_exception_fields[2];
Field g_frame_fields[kMaxCrashFrames][4];
Value g_frame_values[kMaxCrashFrames];
char g_frame_hex[kMaxCrashFrames][2][kHexRoom];
char g_stacktrace[kStacktraceRoom];

/// The frames as an array of objects: address, module, offset, function (the last two only when
/// known).
Array frames_array(std::span<const CrashFrame> frames) noexcept {
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const CrashFrame& frame = frames[i];
        char (&hex)[2][kHexRoom] = g_frame_hex[i];
        Field* const fields = g_frame_fields[i];
        std::size_t count = 0;
        fields[count++] = Field{"address", std::string_view(hex[0], format_hex(frame.address, hex[0]))};
        if (!frame.module.empty()) {
            fields[count++] = Field{"module", frame.module};
            fields[count++] = Field{"offset", std::string_view(hex[1], format_hex(frame.offset, hex[1]))};
        }
        if (!frame.function.empty()) fields[count++] = Field{"function", frame.function};
        g_frame_values[i] = Object(std::span<const Field>(fields, count));
    }
    return Array(std::span<const Value>(g_frame_values, frames.size()));
}

static_assert(kMaxCrashFrames < 100, "stacktrace_text numbers frames with two digits");

/// The frames as one text, a line each: "#0 0x55d0c1e2a3b4 in function (module+0x1a3b4)".
std::string_view stacktrace_text(const FinalNote& note) noexcept {
    std::size_t size = 0;
    const auto put = [&size](std::string_view text) noexcept {
        const std::size_t n = text.size() < kStacktraceRoom - size ? text.size() : kStacktraceRoom - size;
        std::memcpy(g_stacktrace + size, text.data(), n);
        size += n;
    };
    for (std::size_t i = 0; i < note.frames.size(); ++i) {
        const CrashFrame& frame = note.frames[i];
        char hex[kHexRoom];
        constexpr std::string_view digits = "0123456789";
        put("#");
        if (i >= 10) put(digits.substr(i / 10, 1));
        put(digits.substr(i % 10, 1));
        put(" ");
        put(std::string_view(hex, format_hex(frame.address, hex)));
        if (!frame.function.empty()) {
            put(" in ");
            put(frame.function);
        }
        if (!frame.module.empty()) {
            put(" (");
            put(frame.module);
            put("+");
            put(std::string_view(hex, format_hex(frame.offset, hex)));
            put(")");
        }
        put("\n");
    }
    if (note.frames_cut) put("...\n");
    return {g_stacktrace, size};
}

}  // namespace

const LoggerCore& final_record_logger() {
    static const LoggerCore* const logger = new LoggerCore("fieldlog");  // never destroyed
    return *logger;
}

void with_final_record(const FinalNote& note, Format format, void (*use)(const Record& record, const void* argument),
                       const void* argument) noexcept {
    const std::string_view name = signal_name(note.signo);
    char message[32] = "fatal signal ";
    const std::size_t prefix = std::strlen(message);
    std::memcpy(message + prefix, name.data(), name.size());
    char address[kHexRoom];
    const std::size_t address_length = format_hex(reinterpret_cast<std::uintptr_t>(note.address), address);

    const bool otel = format == Format::otel;
    Field fields[8] = {{"signal", name}, {"signo", note.signo}};
    std::size_t count = 2;
    if (note.fault) fields[count++] = Field{"address", std::string_view(address, address_length)};
    if (!note.exception_type.empty()) {
        if (otel) {
            fields[count++] = Field{"exception.type", note.exception_type};
            fields[count++] = Field{"exception.message", note.exception_what};
        } else {
            g_exception_fields[0] = Field{"type", note.exception_type};
            g_exception_fields[1] = Field{"what", note.exception_what};
            fields[count++] = Field{"exception", Object(std::span<const Field>(g_exception_fields))};
        }
    }
    if (!note.frames.empty()) {
        if (otel) {
            fields[count++] = Field{"exception.stacktrace", stacktrace_text(note)};
        } else {
            fields[count++] = Field{"frames", frames_array(note.frames)};
        }
        if (note.frames_cut) fields[count++] = Field{"frames_cut", true};
    }
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
    with_final_record(note, options.format, [](const Record& record, const void* argument) {
        const auto& t = *static_cast<const Target*>(argument);
        try {
            encode_record(t.options, t.out, t.scratch, record, {});
        } catch (...) {
            t.out.clear();
        }
    }, &target);
}

}  // namespace fieldlog::detail
