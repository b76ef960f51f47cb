// SPDX-License-Identifier: MIT
// The final paths (see crash.hpp). write_final_records may run inside a signal handler: no
// heap, no blocking lock, no stdio; its waits are bounded, and the alarm signals.cpp arms ends
// the process by the original signal even if they are not.
#include "control/crash.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "control/state.hpp"
#include "dispatch/channels.hpp"
#include "dispatch/pipeline.hpp"
#include "dispatch/ring_entry.hpp"
#include "dispatch/sink_calls.hpp"
#include "encode/text.hpp"

namespace fieldlog::detail {
namespace {

using namespace std::chrono_literals;

constexpr auto kDrainWait = 1000ms;  // for the writer thread to hand out what was accepted
constexpr auto kLockWait = 500ms;    // for all sink mutexes together
constexpr std::size_t kBatch = 64;   // records per write_on_crash call
constexpr std::size_t kQueuedLinesRoom = std::size_t{1} << 20;  // reserve_final_storage()

// The handler's own storage: only one final path ever runs.
Buffer g_final_record;
Buffer g_final_scratch;
Buffer g_queued_lines;  // the lines of one batch, back to back; never grown in the handler
RecordView g_batch[kBatch];
/// A packed template's fields, made again for the record being encoded (no stack asked of a
/// handler that may run on a small one).
HoleFields g_unpacked;
/// A record's context and fields, for a record whose context the writer had not encoded.
struct ContextAsFields {
    static constexpr std::size_t kFields = 1024;
    constexpr ContextAsFields() noexcept {}
    ~ContextAsFields() {}
    union {
        Field fields[kFields];
    };
} g_context_fields;

void sleep_briefly() noexcept {
    timespec t{0, 1'000'000};
    ::nanosleep(&t, nullptr);
}

std::chrono::nanoseconds monotonic_now() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

Timestamp now_for(const Pipeline& pipeline) noexcept {
    if (pipeline.clock != nullptr) return pipeline.clock();
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return Timestamp(now.tv_sec, static_cast<std::uint32_t>(now.tv_nsec));
}

/// One sink's share of the queued records, encoded into g_queued_lines, gathered into g_batch.
struct CrashShare {
    const RoutingTable& routing;
    std::size_t sink;
    std::size_t count = 0;

    void flush() noexcept {
        routing.sinks[sink]->sink->write_on_crash({g_batch, count});
        count = 0;
        g_queued_lines.clear();
    }
    static void take(void* self, const OwnedRecord& queued, std::size_t size, FilterBits admitted) noexcept {
        auto& share = *static_cast<CrashShare*>(self);
        const Record record = queued.record(g_unpacked);
        for (std::size_t c = 0; c < share.routing.channels.size(); ++c) {
            const Channel& channel = share.routing.channels[c];
            const Route* route = share.routing.route(share.sink, c);
            // The parts of a record would need the heap to gather its context: lost here.
            if (!channel.lines || route == nullptr || !route->takes(record.level, admitted)) continue;
            const std::size_t bound = line_bound(queued, size, channel);
            if (bound > g_queued_lines.capacity()) continue;  // its line might need the heap
            if (g_queued_lines.capacity() - g_queued_lines.size() < bound) share.flush();
            const std::size_t start = g_queued_lines.size();
            try {
                if (context_encoded(record, channel)) {
                    encode_line(channel, record, nullptr, g_queued_lines, g_final_scratch);
                } else {  // written as fields: the crash path makes no encoding
                    const std::span<const Field> fields = context_as_fields(record, g_context_fields.fields);
                    if (fields.data() == nullptr) continue;  // more than the room: lost, as a line too large is
                    const Record flat{record.time, record.level, record.logger, record.message,
                                      nullptr,     nullptr,      fields,        record.thread_id};
                    encode_line(channel, flat, nullptr, g_queued_lines, g_final_scratch);
                }
            } catch (...) {
                g_queued_lines.truncate(start);
                continue;
            }
            g_batch[share.count++] = RecordView{{g_queued_lines.data() + start, g_queued_lines.size() - start},
                                                record.level, record.time, record.logger.name.text};
            if (share.count == kBatch) share.flush();
        }
    }
};

/// The `fatal` record to `sink`, in the form of its channel: a line, or its parts.
void write_final_record(Sink& sink, const Channel& channel, const FinalNote& note, std::string_view logger) noexcept {
    const EncoderOptions& options = channel.final_record_options;
    if (channel.lines) {
        g_final_record.clear();
        encode_final_record(options, g_final_record, g_final_scratch, note);
        const RecordView record{.bytes = g_final_record.span(), .level = Level::fatal, .time = note.time, .logger = logger};
        sink.write_on_crash({&record, 1});
        return;
    }
    struct Target {
        Sink& sink;
        const EncoderOptions& options;
    } const target{sink, options};
    with_final_record(note, options.format, [](const Record& record, const void* argument) {
        const auto& t = *static_cast<const Target*>(argument);
        const RecordView parts{.bytes = {},
                               .level = record.level,
                               .time = record.time,
                               .logger = record.logger.name.text,
                               .message = &record.message,
                               .bound = {},
                               .scope = {},
                               .fields = record.fields,
                               .options = &t.options,
                               .thread_id = record.thread_id};
        t.sink.write_on_crash({&parts, 1});
    }, &target);
}

}  // namespace

void park_until_exit() noexcept {
    for (;;) {
        timespec t{1, 0};
        ::nanosleep(&t, nullptr);
    }
}

void write_final_records(FinalNote& note, bool fatal_record) noexcept {
    set_signal_safe_text(true);  // no error category's message() from here on: it may allocate
    const Pipeline* pipeline = g_current_pipeline.load(std::memory_order_acquire);
    if (pipeline == nullptr) return;
    note.time = now_for(*pipeline);
    const RoutingTable& routing = pipeline->routing;
    AsyncWriter* writer = pipeline->writer.get();
    if (writer != nullptr) {
        writer->seal();
        if (writer->another_thread_writes()) {
            const auto deadline = monotonic_now() + kDrainWait;
            while (monotonic_now() < deadline) {
                SinkMutex& rings = writer->rings_mutex();
                if (rings.try_lock()) {
                    const bool drained = !writer->holds_unwritten();
                    rings.unlock();
                    if (drained) break;
                }
                sleep_briefly();
            }
        }
    }
    const std::size_t sinks = routing.sinks.size();
    const auto lock_deadline = monotonic_now() + kLockWait;
    for (std::size_t i = 0; i < sinks; ++i) {
        SinkMutex& mutex = routing.sinks[i]->sink->mutex();
        while (!mutex.try_lock() && monotonic_now() < lock_deadline) sleep_briefly();
    }
    if (writer != nullptr) {  // the list of rings stays as it is (kept, like the sink mutexes)
        while (!writer->rings_mutex().try_lock() && monotonic_now() < lock_deadline) sleep_briefly();
    }
    for (std::size_t i = 0; i < sinks; ++i) {
        CrashShare share{routing, i};
        if (writer != nullptr) writer->visit_unwritten(i, &CrashShare::take, &share);
        share.flush();  // also when empty: the sink writes what it buffered
        if (!fatal_record) continue;
        const std::string_view logger = final_record_logger().name.text;
        for (std::size_t c = 0; c < routing.channels.size(); ++c) {
            const Route* route = routing.route(i, c);
            if (route == nullptr || !route->takes(Level::fatal, pipeline->final_record_admitted)) continue;
            write_final_record(*routing.sinks[i]->sink, routing.channels[c], note, logger);
        }
    }
    // Every mutex stays taken: nothing more is written before the process ends.
}

void reserve_final_storage() noexcept {
    if (g_queued_lines.capacity() >= kQueuedLinesRoom) return;
    try {
        g_queued_lines.reserve(kQueuedLinesRoom);
    } catch (...) {  // no memory: the crash path makes do with the inline room
    }
}

void flush_and_hold(unsigned alarm_seconds) noexcept {
    state().configure_mutex.lock();  // kept: no configure() swaps the pipeline from under us
    const Pipeline* pipeline = g_current_pipeline.load(std::memory_order_acquire);
    if (pipeline == nullptr) return;
    if (pipeline->writer) {
        pipeline->writer->seal();
        pipeline->writer->drain();
    }
    std::chrono::milliseconds longest{0};
    for (const auto& handle : pipeline->routing.sinks) {
        handle->sink->mutex().lock();  // kept
        longest = std::max(longest, begin_close_sink(*handle->sink));
    }
    // Each sink gets its own bound; the alarm still ends a sink that hangs.
    ::alarm(alarm_seconds + static_cast<unsigned>(std::chrono::ceil<std::chrono::seconds>(longest).count()));
    for (const auto& handle : pipeline->routing.sinks) {
        flush_sink(*handle->sink);
        // The process ends next, as after a crash: a sink's last steps (a file sink puts back a
        // rotated file it was compressing) are the crash hook's, with nothing left to write.
        handle->sink->write_on_crash({});
    }
}

}  // namespace fieldlog::detail
