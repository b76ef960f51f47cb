// The halt gate's parking, the `fatal` record's writing, and the handler's own
// async-signal-safe flush (see final_flush.hpp). Everything here may run inside a signal
// handler: no heap, no blocking lock, no stdio.
#include "dispatch/final_flush.hpp"

#include <signal.h>
#include <time.h>

#include <cstdlib>

#include "dispatch/async_writer.hpp"
#include "dispatch/pipeline.hpp"

namespace fieldlog::detail {
namespace {

constexpr std::size_t kSignalStackSize = 64 * 1024;
constexpr int kLockAttempts = 200;  // 1 ms apart: a sink busy longer than that is taken as stuck

void sleep_one_millisecond() noexcept {
    timespec t{0, 1'000'000};
    ::nanosleep(&t, nullptr);
}

/// The alternate stack of this thread, set up by prepare_thread_for_signals().
struct SignalStack {
    void* memory = nullptr;
    SignalStack() = default;
    SignalStack(const SignalStack&) = delete;
    SignalStack& operator=(const SignalStack&) = delete;
    ~SignalStack() {
        if (memory == nullptr) return;
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        ::sigaltstack(&off, nullptr);
        std::free(memory);
    }
};
thread_local SignalStack t_signal_stack;

// The handler's own buffers for the `fatal` record: only one final path ever runs.
Buffer g_final_record;
Buffer g_final_scratch;

}  // namespace

void park_until_exit() noexcept {
    for (;;) {
        timespec t{1, 0};
        ::nanosleep(&t, nullptr);
    }
}

void prepare_thread_for_signals() noexcept {
    t_signal_generation = g_signal_generation.load(std::memory_order_relaxed);
    if (t_signal_stack.memory != nullptr) return;
    stack_t current{};
    if (::sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;  // it has one
    void* memory = std::malloc(kSignalStackSize);
    if (memory == nullptr) return;
    stack_t stack{};
    stack.ss_sp = memory;
    stack.ss_size = kSignalStackSize;
    if (::sigaltstack(&stack, nullptr) != 0) {
        std::free(memory);
        return;
    }
    t_signal_stack.memory = memory;
}

bool lock_for_final(SinkLock& mutex) noexcept {
    for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
        if (mutex.try_lock()) return true;
        sleep_one_millisecond();
    }
    return false;
}

void final_flush_from_handler(const Pipeline& pipeline, const FinalNote& note) noexcept {
    constexpr std::size_t kMaxLocked = 64;
    bool locked[kMaxLocked] = {};
    const std::size_t sinks = pipeline.handles.size();
    for (std::size_t i = 0; i < sinks && i < kMaxLocked; ++i) locked[i] = lock_for_final(pipeline.handles[i]->mutex);
    for (const auto& handle : pipeline.handles) handle->sink->emergency_flush();
    if (pipeline.writer) pipeline.writer->write_queued_from_handler();
    if (note.fatal_record && note.encode != nullptr) {
        for (const Channel& channel : pipeline.channels) {
            if (Level::fatal < channel.min_level) continue;
            g_final_record.clear();
            note.encode(channel.options, g_final_record, g_final_scratch, note);
            for (const Route& route : channel.routes) {
                if (Level::fatal >= route.level) route.handle->sink->emergency_write(g_final_record.span());
            }
        }
    }
    for (std::size_t i = 0; i < sinks && i < kMaxLocked; ++i) {
        if (locked[i]) pipeline.handles[i]->mutex.unlock();
    }
}

}  // namespace fieldlog::detail
