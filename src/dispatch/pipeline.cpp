#include "dispatch/pipeline.hpp"

#include <chrono>
#include <mutex>
#include <thread>

#include "dispatch/sink_calls.hpp"

namespace fieldlog::detail {

namespace {

/// Writes `record` to each route of `channel` that takes its level, under each sink's mutex.
/// Inlined into dispatch(): out of line, its register saves cost a record ~15 instructions.
[[gnu::always_inline]] inline void write_to_sinks(const Channel& channel, const RecordView& record,
                                                  bool flush_each_record) noexcept {
    for (const Route& route : channel.routes) {
        if (record.level < route.level) continue;
        const std::lock_guard lock(route.sink->mutex());
        deliver(*route.sink, record);
        if (flush_each_record) [[unlikely]] flush_sink(*route.sink);
    }
}

}  // namespace

void Pipeline::dispatch(const Channel& channel, const RecordView& record) const noexcept {
    if (writer) {
        const auto index = static_cast<std::uint32_t>(&channel - routing.channels.data());
        if (writer->enqueue(index, record) != AsyncWriter::Enqueued::too_large) return;
        writer->drain();  // too large for the queue: written here, after this thread's earlier records
    } else if (!open.load(std::memory_order_acquire)) [[unlikely]] {
        wait_until_open();
    }
    write_to_sinks(channel, record, flush_each_record);
}

void Pipeline::wait_until_open() const noexcept {
    while (!open.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void Pipeline::flush() const noexcept {
    if (writer) writer->drain();
    for (const auto& handle : routing.sinks) {
        const std::lock_guard lock(handle->sink->mutex());
        flush_sink(*handle->sink);
    }
}

}  // namespace fieldlog::detail
