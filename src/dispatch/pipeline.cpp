#include "dispatch/pipeline.hpp"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "dispatch/final_flush.hpp"

namespace fieldlog::detail {

namespace {

/// Writes `record` to each route of `channel` that takes its level, under each sink's lock.
/// Inlined into dispatch(): out of line, its register saves cost a record ~15 instructions.
[[gnu::always_inline]] inline void write_to_sinks(const Channel& channel, const RecordView& record,
                                                  bool flush_each_record) noexcept {
    for (const Route& route : channel.routes) {
        if (record.level < route.level) continue;
        const std::lock_guard lock(route.handle->mutex);
        route.handle->sink->write_record(record);
        if (flush_each_record) [[unlikely]] route.handle->sink->flush();
    }
}

}  // namespace

std::uint32_t intern_options(const EncoderOptions& options) {
    static std::mutex mutex;
    static std::vector<EncoderOptions> known;
    const std::lock_guard lock(mutex);
    for (std::size_t i = 0; i < known.size(); ++i) {
        if (known[i] == options) return static_cast<std::uint32_t>(i);
    }
    known.push_back(options);
    return static_cast<std::uint32_t>(known.size() - 1);
}

void Pipeline::dispatch(const Channel& channel, const RecordView& record) const noexcept {
    check_thread_for_signals();
    if (writer) {
        const auto index = static_cast<std::uint32_t>(&channel - channels.data());
        if (writer->enqueue(index, record) != AsyncWriter::Enqueued::too_large) return;
        writer->drain();  // too large for the queue: written here, after this thread's earlier records
    } else if (!open.load(std::memory_order_acquire)) [[unlikely]] {
        wait_until_open();
    }
    write_to_sinks(channel, record, flush_each_record);
    if (halting()) park_until_exit();  // the process is ending: this call must not return
}

void Pipeline::wait_until_open() const noexcept {
    while (!open.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void Pipeline::flush() const noexcept {
    if (writer) writer->drain();
    for (const auto& handle : handles) {
        const std::lock_guard lock(handle->mutex);
        handle->sink->flush();
    }
}

}  // namespace fieldlog::detail
