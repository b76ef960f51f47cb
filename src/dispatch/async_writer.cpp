// SPDX-License-Identifier: MIT
// The async writer's thread: started with the pipeline (or again after a fork, or when a thread
// could not be made), woken when a ring fills past half or a caller waits, or after a quiet
// spell by the next record, asleep otherwise; each sweep is the merge's (async_merge.hpp);
// drain() and stop() wait for it.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "base/thread_id.hpp"
#include "dispatch/async_ring.hpp"

namespace fieldlog::detail {

void AsyncWriter::set_needs_thread() noexcept {
    thread_state_.store(ThreadState::needs_thread);
    attention_.fetch_or(kNeedsThread, std::memory_order_seq_cst);
}

void AsyncWriter::wake_writer() noexcept {
    if (writer_sleeping_.load(std::memory_order_seq_cst)) {
        wake_.fetch_add(1, std::memory_order_release);
        wake_all(wake_);
    }
}

void AsyncWriter::start() {
    ThreadState expected = ThreadState::not_started;
    if (thread_state_.compare_exchange_strong(expected, ThreadState::running) && !start_thread()) set_needs_thread();
}

void AsyncWriter::ensure_running() noexcept {
    ThreadState expected = ThreadState::needs_thread;
    if (!thread_state_.compare_exchange_strong(expected, ThreadState::running)) return;
    attention_.fetch_and(~kNeedsThread, std::memory_order_seq_cst);
    if (!start_thread()) set_needs_thread();
}

bool AsyncWriter::start_thread() noexcept {
    // The writer takes no process-directed signal (SIGTERM, SIGHUP, …): those go to threads
    // that may run their handlers. Faults stay deliverable (blocking them would kill outright).
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    for (const int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) sigdelset(&all, fault);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    const int error = pthread_create(&thread_, nullptr, &AsyncWriter::thread_main, this);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (error != 0) {
        std::fprintf(stderr, "fieldlog: cannot start the async writer thread: %s\n", std::strerror(error));
        return false;
    }
    return true;
}

void* AsyncWriter::thread_main(void* self) noexcept {
    name_this_thread("fieldlog-writer");
    static_cast<AsyncWriter*>(self)->run();
    return nullptr;
}

void AsyncWriter::drain() noexcept {
    {
        const std::lock_guard lock(rings_.mutex());
        if (!holds_unwritten()) return;
    }
    // A sweep that begins after this point looks at every ring after this thread's records (and
    // any it has seen published) were published: the fences order the load here and the
    // writer's look against the ring stores before them.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint64_t target = sweeps_begun_.load(std::memory_order_seq_cst) + 1;
    ensure_running();
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
        const std::uint32_t seen = progress_.load(std::memory_order_seq_cst);
        if (sweeps_done_.load(std::memory_order_acquire) >= target) break;
        wake_writer();
        wait_on(progress_, seen, kIdleSleep);
        ensure_running();
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void AsyncWriter::stop() noexcept {
    ThreadState state = thread_state_.load(std::memory_order_acquire);
    if (state == ThreadState::stopped) return;
    stopping_.store(true, std::memory_order_seq_cst);
    if (state != ThreadState::running) {
        bool unwritten = false;
        {
            const std::lock_guard lock(rings_.mutex());
            unwritten = holds_unwritten();
        }
        if (!unwritten) {
            thread_state_.store(ThreadState::stopped);
            return;
        }
        thread_state_.store(ThreadState::running);
        if (!start_thread()) {  // no thread to be had: write what is left on this one
            run();
            thread_state_.store(ThreadState::stopped);
            return;
        }
    }
    wake_.fetch_add(1, std::memory_order_release);
    wake_all(wake_);
    pthread_join(thread_, nullptr);
    thread_state_.store(ThreadState::stopped);
}

void AsyncWriter::run() noexcept {
    writer_tid_.store(kernel_thread_id(), std::memory_order_release);
    merge_.take_pool();
    std::uint32_t empty_sweeps = 0;
    for (;;) {  // a sweep: every ring's published records, in batches
        const bool stopping = stopping_.load(std::memory_order_acquire);
        const std::uint64_t number = sweeps_begun_.fetch_add(1, std::memory_order_seq_cst) + 1;
        std::atomic_thread_fence(std::memory_order_seq_cst);
        merge_.look(rings_);
        bool wrote = false;
        while (merge_.write_batch() != 0) {
            wrote = true;
            note_progress();
        }
        sweeps_done_.store(number, std::memory_order_release);
        note_progress();
        if (wrote) {
            empty_sweeps = 0;
            continue;
        }
        if (stopping) break;  // a whole sweep after callers stopped found nothing
        idle_wait(++empty_sweeps >= kEmptySweepsBeforeLongSleep);
    }
    merge_.give_back_pool();
    writer_tid_.store(0, std::memory_order_release);
}

void AsyncWriter::idle_wait(bool long_sleep) noexcept {
    const std::uint32_t seen = wake_.load(std::memory_order_acquire);
    writer_sleeping_.store(true, std::memory_order_seq_cst);
    // With the flag set and the fence, a caller's commit either shows in the look below or
    // sees the flag (its seq_cst publish, then its load of attention_) and wakes this thread.
    if (long_sleep) {
        attention_.fetch_or(kWakeOnCommit, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    const bool pending = stopping_.load(std::memory_order_seq_cst) || rings_.joined_since_look() || merge_.holds_unread();
    if (!pending) wait_on(wake_, seen, long_sleep ? std::chrono::nanoseconds(kLongSleep) : kIdleSleep);
    writer_sleeping_.store(false, std::memory_order_relaxed);
    if (long_sleep) attention_.fetch_and(~kWakeOnCommit, std::memory_order_seq_cst);
}

void AsyncWriter::note_progress() noexcept {
    progress_.fetch_add(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) > 0) wake_all(progress_);
}

void accumulate(AsyncMetrics& total, const AsyncMetrics& more) noexcept {
    total.accepted_records += more.accepted_records;
    total.accepted_bytes += more.accepted_bytes;
    total.dropped_records += more.dropped_records;
    total.blocked_nanos += more.blocked_nanos;
}

}  // namespace fieldlog::detail
