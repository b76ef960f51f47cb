// SPDX-License-Identifier: MIT
// The rings and the writer thread. A ring entry is a record header (what the writer needs to
// order and route it) and the record's owned copy (the record layer's payload).
// Callers: find the thread's ring (one compare), reserve, copy, commit with one release store.
// Writer: at each sweep, one look at every ring; batches of what that look saw, merged by time;
// encode each record once per channel that takes it, hand each sink its share, then release
// each record's payload and free each ring's part. A ring is shared by its thread and the writer, and freed by whichever
// lets go of it last, so neither has to outlive the other.
#include "dispatch/async_writer.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "base/thread_id.hpp"
#include "dispatch/pipeline.hpp"
#include "dispatch/sink_calls.hpp"

namespace fieldlog::detail {

/// One thread's ring and what the writer and the crash path keep beside it.
struct AsyncWriter::Ring {
    Ring(std::size_t capacity, std::size_t sinks)
        : queue(capacity), handed_upto(std::make_unique<std::atomic<std::uint64_t>[]>(sinks)) {}

    SpscRing queue;
    /// Per sink: the position up to which the writer has handed it this ring's records. Written
    /// under the sink's mutex, so the crash path, holding it, reads where to go on from.
    std::unique_ptr<std::atomic<std::uint64_t>[]> handed_upto;
    /// 2 while a thread writes the ring, 1 once only the writer holds it (a spare, or its
    /// thread let go), 0: freed by whichever let go last.
    std::atomic<int> owners{1};
    std::atomic<int> thread_id{0};
    std::atomic<std::uint64_t> high_water{0};
    std::atomic<std::uint64_t> blocked_nanos{0};
    // The writer's (its thread only).
    std::uint64_t read = 0;       // everything below is handed out and released
    std::uint64_t sweep_end = 0;  // published end at the sweep's look
    std::uint64_t batch_end = 0;  // how far the current batch took
    // The crash path's walk (one final path ever runs).
    mutable std::uint64_t crash_read = 0;
};

namespace {

using namespace std::chrono_literals;

constexpr std::size_t kMaxCapacity = std::size_t{1} << 30;  // entry sizes must fit the ring's size word
// The writer sleeps as soon as it finds every ring empty, at most kIdleSleep; callers never pay
// for a wake-up unless their ring is more than half full. It does not spin first: under a
// steady trickle of records a spinning writer never sleeps and writes them one at a time,
// taking a core from the threads that log (the example service lost 10-15% of its requests/s
// to it on 2 cores).
constexpr auto kIdleSleep = 1ms;
constexpr std::size_t kFreedAtOnce = 16;  // rings freed after one look; more wait for the next

// The record header at the start of each ring entry (offsets in bytes); the payload follows it.
// The record's own level and time are in the payload (QueuedCodec::facts).
constexpr std::size_t kLengthAt = 0;
constexpr std::size_t kAdmittedAt = 4;  // the logger's LoggerMask
constexpr std::size_t kOrderKeyAt = 8;
constexpr std::size_t kHeaderSize = 16;  // a multiple of 8: the payload is 8-aligned
// A batch's lines, reserved when the writer is made: a batch ends where the next record's lines
// would not fit, so the writer allocates nothing after configure(). A single record larger than
// this gets the room it needs, given back after its batch.
constexpr std::size_t kLineBytes = std::size_t{1} << 20;

template <typename T>
void put(char* at, T value) noexcept {
    std::memcpy(at, &value, sizeof value);
}
template <typename T>
T get(const char* at) noexcept {
    T value;
    std::memcpy(&value, at, sizeof value);
    return value;
}

QueuedView view_of(const QueuedCodec& codec, const char* entry) noexcept {
    QueuedView view{entry + kHeaderSize, get<std::uint32_t>(entry + kLengthAt), Level::info, Timestamp{},
                    get<LoggerMask>(entry + kAdmittedAt)};
    codec.facts(view.payload, view.level, view.time);
    return view;
}

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
    const timespec relative{static_cast<time_t>(timeout.count() / 1'000'000'000),
                            static_cast<long>(timeout.count() % 1'000'000'000)};
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &relative, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

/// The sort key of a record: its time in nanoseconds, raised to this thread's previous key so
/// a clock that steps back cannot reorder one thread's records.
thread_local std::int64_t t_last_order_key = INT64_MIN;

std::int64_t order_key(Timestamp time) noexcept {
    constexpr std::int64_t kLimit = INT64_MAX / 1'000'000'000 - 1;
    std::int64_t key = time.seconds > kLimit    ? INT64_MAX
                       : time.seconds < -kLimit ? INT64_MIN
                                                : time.seconds * 1'000'000'000 + time.nanos;
    key = std::max(key, t_last_order_key);
    t_last_order_key = key;
    return key;
}

std::size_t ring_capacity(std::size_t configured) noexcept {
    const std::size_t clamped = std::clamp(configured, AsyncWriter::kMinCapacity, kMaxCapacity);
    return std::bit_floor(clamped);
}

std::uint64_t elapsed_nanos(std::chrono::steady_clock::time_point since) noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

std::atomic<std::uint64_t> g_writer_serials{0};

/// A caller that came after the seal: the process is on its final path and ends soon.
[[noreturn]] void park_for_good() noexcept {
    for (;;) ::pause();
}

/// Lets go of a ring; the last of its owners frees it.
void let_go(AsyncWriter::Ring* ring) noexcept {
    if (ring->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete ring;
}

/// This thread's ring: trivially destructible, so the record path reads it with no guard.
struct ThreadRing {
    std::uint64_t writer = 0;  // the serial of the writer it belongs to
    AsyncWriter::Ring* ring = nullptr;
    bool exiting = false;  // the thread's ring was given back at its exit
};
thread_local ThreadRing t_ring;

/// Gives this thread's ring back when the thread exits; armed by the thread's first ring.
struct RingReturn {
    bool armed = false;
    RingReturn() = default;
    RingReturn(const RingReturn&) = delete;
    RingReturn& operator=(const RingReturn&) = delete;
    ~RingReturn() {
        if (t_ring.ring != nullptr) let_go(t_ring.ring);
        t_ring = ThreadRing{.exiting = true};
    }
};
thread_local RingReturn t_ring_return;

}  // namespace

AsyncWriter::AsyncWriter(const Pipeline& pipeline, const AsyncConfig& config, const QueuedCodec& codec)
    : pipeline_(pipeline),
      codec_(codec),
      capacity_(ring_capacity(config.queue_bytes)),
      overflow_(config.overflow),
      serial_(g_writer_serials.fetch_add(1, std::memory_order_relaxed) + 1),
      batch_(kMaxBatch),
      views_(kMaxBatch * std::max<std::size_t>(1, pipeline.routing.channels.size()) * 2) {
    runs_.reserve(kMaxBatch);  // a run has at least one record
    taken_.reserve(kMaxBatch);
    line_facts_.reserve(views_.size() / 2);  // a line per record and channel at most
    lines_.reserve(kLineBytes);
    spares_.reserve(kSpareRings);
}

AsyncWriter::~AsyncWriter() {
    stop();
    for (Ring* ring : rings_) let_go(ring);
    for (Ring* ring : spares_) let_go(ring);
}

AsyncWriter::Slot AsyncWriter::reserve(std::size_t size) noexcept {
    const std::size_t entry_size = kHeaderSize + size;
    if (SpscRing::footprint(entry_size) > capacity_ / 2) {
        if (overflow_ == OverflowPolicy::block) return {nullptr, Enqueued::too_large};
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return {nullptr, Enqueued::dropped};
    }
    Ring* ring = t_ring.ring;
    if (t_ring.writer != serial_) [[unlikely]] {
        ring = attach();
        if (ring == nullptr) return {nullptr, t_ring.exiting ? Enqueued::too_large : Enqueued::dropped};
    }
    char* p = ring->queue.try_reserve(entry_size);
    if (p == nullptr) [[unlikely]] {
        p = wait_for_space(*ring, entry_size);
        if (p == nullptr) return {nullptr, Enqueued::dropped};
    }
    put(p + kLengthAt, static_cast<std::uint32_t>(size));
    return {p + kHeaderSize, Enqueued::queued};
}

AsyncWriter::Enqueued AsyncWriter::commit(char* payload, Timestamp time, LoggerMask admitted) noexcept {
    Ring* ring = t_ring.ring;
    char* p = payload - kHeaderSize;
    put(p + kOrderKeyAt, order_key(time));
    put(p + kAdmittedAt, admitted);
    // seq_cst, and the seal's fence: either the crash path's walk sees this record, or this
    // caller sees the seal.
    ring->queue.commit(std::memory_order_seq_cst);
    if (attention_.load(std::memory_order_seq_cst) != 0) [[unlikely]] {
        if (const Enqueued outcome = attend(); outcome != Enqueued::queued) return outcome;
    }

    const std::uint64_t used = ring->queue.used();
    if (used > ring->high_water.load(std::memory_order_relaxed)) [[unlikely]] raise_high_water(*ring, used);
    if (used > capacity_ / 2 && writer_sleeping_.load(std::memory_order_relaxed)) wake_writer();
    return Enqueued::queued;
}

AsyncWriter::Ring* AsyncWriter::attach() noexcept {
    if (t_ring.exiting) return nullptr;  // its thread_locals are being destroyed: no new ring
    if (t_ring.ring != nullptr) let_go(t_ring.ring);  // an earlier writer's: that writer drains it
    t_ring = ThreadRing{};
    t_ring_return.armed = true;
    Ring* ring = nullptr;
    {
        const std::lock_guard lock(rings_mutex_);
        if (!spares_.empty()) {
            ring = spares_.back();
            spares_.pop_back();
        }
    }
    try {
        if (ring == nullptr) ring = new Ring(capacity_, pipeline_.routing.sinks.size());
        ring->queue.hand_over();
        ring->owners.store(2, std::memory_order_relaxed);
        ring->thread_id.store(kernel_thread_id(), std::memory_order_relaxed);
        ring->high_water.store(0, std::memory_order_relaxed);
        ring->blocked_nanos.store(0, std::memory_order_relaxed);
        const std::lock_guard lock(rings_mutex_);
        rings_.push_back(ring);
        rings_changed_.fetch_add(1, std::memory_order_release);
    } catch (...) {  // no memory for a ring: this record is dropped, the next one tries again
        if (ring != nullptr) let_go(ring);
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    t_ring = ThreadRing{.writer = serial_, .ring = ring};
    return ring;
}

AsyncWriter::Enqueued AsyncWriter::attend() noexcept {
    if ((attention_.load(std::memory_order_relaxed) & kSealed) != 0) {
        // Committed after the seal: the walk may or may not have seen it. With `drop` it
        // counts as lost; with `block` this caller waits for good, as after a seal it must.
        if (overflow_ == OverflowPolicy::block) park_for_good();
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return Enqueued::dropped;
    }
    ensure_running();
    return Enqueued::queued;
}

void AsyncWriter::set_needs_thread() noexcept {
    thread_state_.store(ThreadState::needs_thread);
    attention_.fetch_or(kNeedsThread, std::memory_order_seq_cst);
}


void AsyncWriter::raise_high_water(Ring& ring, std::uint64_t used) noexcept {
    ring.high_water.store(used, std::memory_order_relaxed);
    std::uint64_t seen = high_water_.load(std::memory_order_relaxed);
    while (used > seen && !high_water_.compare_exchange_weak(seen, used, std::memory_order_relaxed)) {
    }
}

char* AsyncWriter::wait_for_space(Ring& ring, std::size_t size) noexcept {
    if (overflow_ == OverflowPolicy::drop) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    const auto start = std::chrono::steady_clock::now();
    ensure_running();
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    char* p = nullptr;
    for (;;) {
        const std::uint32_t seen = progress_.load(std::memory_order_seq_cst);
        if ((p = ring.queue.try_reserve(size)) != nullptr) break;
        wake_writer();
        futex_wait(progress_, seen, kIdleSleep);
        ensure_running();
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    const std::uint64_t waited = elapsed_nanos(start);
    ring.blocked_nanos.store(ring.blocked_nanos.load(std::memory_order_relaxed) + waited, std::memory_order_relaxed);
    blocked_nanos_.fetch_add(waited, std::memory_order_relaxed);
    return p;
}

void AsyncWriter::wake_writer() noexcept {
    if (writer_sleeping_.load(std::memory_order_seq_cst)) {
        wake_.fetch_add(1, std::memory_order_release);
        futex_wake_all(wake_);
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
    static_cast<AsyncWriter*>(self)->run();
    return nullptr;
}

bool AsyncWriter::holds_unwritten() const noexcept {
    for (const Ring* ring : rings_) {
        if (ring->queue.released() != ring->queue.published()) return true;
    }
    return false;
}

void AsyncWriter::drain() noexcept {
    {
        const std::lock_guard lock(rings_mutex_);
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
        futex_wait(progress_, seen, kIdleSleep);
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
            const std::lock_guard lock(rings_mutex_);
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
    futex_wake_all(wake_);
    pthread_join(thread_, nullptr);
    thread_state_.store(ThreadState::stopped);
}

void AsyncWriter::run() noexcept {
    writer_tid_.store(kernel_thread_id(), std::memory_order_release);
    for (;;) {
        const bool stopping = stopping_.load(std::memory_order_acquire);
        if (sweep()) continue;
        if (stopping) break;  // a whole sweep after callers stopped found nothing
        idle_wait();
    }
    writer_tid_.store(0, std::memory_order_release);
}

void AsyncWriter::idle_wait() noexcept {
    const std::uint32_t seen = wake_.load(std::memory_order_acquire);
    writer_sleeping_.store(true, std::memory_order_seq_cst);
    bool pending = stopping_.load(std::memory_order_seq_cst) ||
                   rings_changed_.load(std::memory_order_acquire) != rings_seen_;
    for (const Ring* ring : sweep_rings_) pending = pending || ring->queue.published() != ring->read;
    if (!pending) futex_wait(wake_, seen, kIdleSleep);
    writer_sleeping_.store(false, std::memory_order_relaxed);
}

bool AsyncWriter::sweep() noexcept {
    const std::uint64_t number = sweeps_begun_.fetch_add(1, std::memory_order_seq_cst) + 1;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    look_at_rings();
    bool wrote = false;
    for (;;) {
        const std::size_t count = collect();
        if (count == 0) break;
        write_batch(count);
        wrote = true;
    }
    sweeps_done_.store(number, std::memory_order_release);
    note_progress();
    return wrote;
}

void AsyncWriter::look_at_rings() noexcept {
    // Rings whose thread let go and that are drained leave the list: spare, or freed.
    Ring* freed[kFreedAtOnce];
    std::size_t to_free = 0;
    bool recycle = false;
    for (const Ring* ring : sweep_rings_) {
        recycle = recycle || (ring->owners.load(std::memory_order_acquire) == 1 && ring->queue.published() == ring->read);
    }
    if (recycle || rings_changed_.load(std::memory_order_acquire) != rings_seen_) {
        const std::lock_guard lock(rings_mutex_);
        std::erase_if(rings_, [&](Ring* ring) {
            const bool drained =
                ring->owners.load(std::memory_order_acquire) == 1 && ring->queue.published() == ring->read;
            if (!drained || to_free == std::size(freed)) return false;
            if (spares_.size() < kSpareRings) {
                spares_.push_back(ring);  // reserved below: never allocates
            } else {
                freed[to_free++] = ring;
            }
            return true;
        });
        rings_seen_ = rings_changed_.load(std::memory_order_acquire);
        try {
            sweep_rings_.assign(rings_.begin(), rings_.end());  // grows only with the thread count
        } catch (...) {  // no memory: keep the rings the writer knew; the rest wait for the next sweep
            rings_seen_ = 0;
        }
    }
    for (std::size_t i = 0; i < to_free; ++i) let_go(freed[i]);
    for (Ring* ring : sweep_rings_) ring->sweep_end = ring->queue.published();
}

std::size_t AsyncWriter::collect() noexcept {
    std::size_t count = 0;
    runs_.clear();
    const std::uint64_t limit = capacity_ / 4;
    // Every ring with records gets a share of the batch, so the hold-back in write_batch (which
    // looks at the rings that have a run in it) always lets something through.
    std::size_t pending = 0;
    for (const Ring* ring : sweep_rings_) pending += ring->read < ring->sweep_end ? 1 : 0;
    const std::size_t share = std::max<std::size_t>(1, kMaxBatch / std::max<std::size_t>(1, pending));
    for (Ring* ring : sweep_rings_) {
        std::uint64_t position = ring->read;
        const std::size_t begin = count;
        while (position < ring->sweep_end && count < kMaxBatch && count - begin < share && position - ring->read < limit) {
            const SpscRing::Entry entry = ring->queue.entry_at(position);
            batch_[count++] = Pending{entry.data, get<std::int64_t>(entry.data + kOrderKeyAt), position};
            position = entry.next;
        }
        ring->batch_end = position;
        if (count > begin) runs_.push_back(Run{ring, begin, count});
    }
    return count;
}

void AsyncWriter::write_batch(std::size_t collected) noexcept {
    // Hold-back: a ring this batch did not take to its sweep end may still hold a record older
    // than what others offer, so nothing later than its first record left out goes in this
    // batch. Records a thread logged after another's (a join, a lock) keep that order too
    // (unless more than kMaxBatch rings hold records at once: a ring without a run is not
    // waited for).
    std::int64_t limit = INT64_MAX;
    for (const Run& run : runs_) {
        const Ring& ring = *run.ring;
        if (ring.batch_end < ring.sweep_end) {
            limit = std::min(limit, get<std::int64_t>(ring.queue.entry_at(ring.batch_end).data + kOrderKeyAt));
        }
    }
    // Merge the runs by time: each is in order already, and on equal keys the earlier run
    // goes first, so every ring keeps its own order.
    taken_.clear();
    lines_.clear();
    line_facts_.clear();
    for (std::size_t i = 0; i < collected; ++i) {
        Run* first = nullptr;
        for (Run& run : runs_) {
            if (run.begin < run.end && (first == nullptr || batch_[run.begin].order_key < batch_[first->begin].order_key)) first = &run;
        }
        if (batch_[first->begin].order_key > limit) break;  // never the first: limit is at least that key
        const QueuedView record = view_of(codec_, batch_[first->begin].record);
        if (!encode_lines(record)) break;  // the batch's lines are full: the rest go in the next
        taken_.push_back(record);          // reserved: never allocates
        ++first->begin;
    }
    for (const Run& run : runs_) {  // what was held back is taken again by the next batch
        if (run.begin < run.end) run.ring->batch_end = batch_[run.begin].position;
    }

    RecordView* all = views_.data();
    RecordView* chosen = views_.data() + views_.size() / 2;
    const std::size_t count = line_facts_.size();
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const Line& line = line_facts_[i];
        all[i] = RecordView{{lines_.data() + line.offset, line.size}, line.level, line.time, line.logger};
        bytes += line.size;
    }
    const RoutingTable& routing = pipeline_.routing;
    for (std::size_t s = 0; s < routing.sinks.size(); ++s) {
        Sink& sink = *routing.sinks[s]->sink;
        const std::lock_guard lock(sink.mutex());
        if (routing.sinks[s]->info.typed) {
            write_typed_share(s, sink);
        } else {
            std::size_t n = 0;
            for (std::size_t i = 0; i < count; ++i) {
                const Line& line = line_facts_[i];
                const Route* route = routing.route(s, line.channel);
                if (route != nullptr && route->takes(line.level, line.admitted)) chosen[n++] = all[i];
            }
            if (n != 0) deliver_batch(sink, std::span<const RecordView>(chosen, n));
        }
        for (const Run& run : runs_) run.ring->handed_upto[s].store(run.ring->batch_end, std::memory_order_relaxed);  // published by the unlock
    }
    for (const QueuedView& record : taken_) codec_.release(record);
    for (const Run& run : runs_) {
        run.ring->read = run.ring->batch_end;
        run.ring->queue.release(run.ring->batch_end);
    }
    if (lines_.capacity() > kLineBytes) {  // a record larger than the reserve passed
        std::vector<char>().swap(lines_);
        try {
            lines_.reserve(kLineBytes);
        } catch (...) {  // the next batch grows it as far as it can
        }
    }
    accepted_records_.store(accepted_records_.load(std::memory_order_relaxed) + taken_.size(), std::memory_order_relaxed);
    accepted_bytes_.store(accepted_bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    note_progress();
}

void AsyncWriter::write_typed_share(std::size_t s, Sink& sink) noexcept {
    const std::vector<Channel>& channels = pipeline_.routing.channels;
    for (std::size_t c = 0; c < channels.size(); ++c) {
        const Route* route = pipeline_.routing.route(s, c);
        if (!channels[c].typed || route == nullptr) continue;
        for (const QueuedView& record : taken_) {
            if (route->takes(record.level, record.admitted)) codec_.write_typed(record, pipeline_, sink);
        }
    }
}

bool AsyncWriter::encode_lines(const QueuedView& record) noexcept {
    const std::size_t lines_before = lines_.size();
    const std::size_t facts_before = line_facts_.size();
    const std::vector<Channel>& channels = pipeline_.routing.channels;
    for (std::size_t c = 0; c < channels.size(); ++c) {
        if (channels[c].typed || !channels[c].takes(record.level, record.admitted)) continue;
        line_.clear();
        if (codec_.encode(record, channels[c], line_, scratch_)) {
            if (lines_.size() + line_.size() > lines_.capacity() && !taken_.empty()) {
                lines_.resize(lines_before);  // within capacity: never allocates
                line_facts_.resize(facts_before);
                line_.shrink();
                return false;
            }
            try {
                const std::size_t offset = lines_.size();
                lines_.insert(lines_.end(), line_.data(), line_.data() + line_.size());
                line_facts_.push_back(Line{offset, line_.size(), record.level, record.time,
                                           static_cast<std::uint32_t>(c), record.admitted,
                                           codec_.logger_name(record)});  // reserved
            } catch (...) {  // no memory for a record larger than the reserve: this channel's sinks miss it
            }
        }
        line_.shrink();
    }
    return true;
}

void AsyncWriter::note_progress() noexcept {
    progress_.fetch_add(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) > 0) futex_wake_all(progress_);
}

AsyncMetrics AsyncWriter::metrics() const {
    AsyncMetrics m{.accepted_records = accepted_records_.load(std::memory_order_relaxed),
                   .accepted_bytes = accepted_bytes_.load(std::memory_order_relaxed),
                   .dropped_records = dropped_.load(std::memory_order_relaxed),
                   .queue_high_water = high_water_.load(std::memory_order_relaxed),
                   .queue_capacity = capacity_,
                   .blocked_nanos = blocked_nanos_.load(std::memory_order_relaxed)};
    const std::lock_guard lock(rings_mutex_);
    m.rings.reserve(rings_.size());
    for (const Ring* ring : rings_) {
        m.rings.push_back(AsyncRingMetrics{.thread_id = static_cast<std::uint64_t>(ring->thread_id.load(std::memory_order_relaxed)),
                                           .high_water = ring->high_water.load(std::memory_order_relaxed),
                                           .blocked_nanos = ring->blocked_nanos.load(std::memory_order_relaxed)});
    }
    m.spare_rings = spares_.size();
    return m;
}

void AsyncWriter::after_fork_in_child() noexcept {
    // Only the forking thread exists here, and lock_for_fork() holds the list. The parent's
    // records are the parent's to write: every ring is emptied. Their payloads' references are
    // not given back: the parent's writer may have been giving some back at the fork, and one
    // given back twice would free a node in use; what they hold stays until the child exits.
    // The rings of the threads that did not survive are let go on their behalf, so the writer
    // recycles them.
    for (Ring* ring : rings_) {
        const std::uint64_t end = ring->queue.published();
        ring->read = ring->sweep_end = ring->batch_end = end;
        ring->queue.release(end);
        const bool forking_thread = t_ring.writer == serial_ && t_ring.ring == ring;
        if (!forking_thread && ring->owners.load(std::memory_order_relaxed) == 2) {
            ring->owners.store(1, std::memory_order_relaxed);
        }
    }
    if (t_ring.writer == serial_) t_ring.ring->queue.hand_over();
    sweeps_done_.store(sweeps_begun_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    waiters_.store(0, std::memory_order_relaxed);
    writer_sleeping_.store(false, std::memory_order_relaxed);
    writer_tid_.store(0, std::memory_order_relaxed);
    if (thread_state_.load(std::memory_order_relaxed) == ThreadState::running) set_needs_thread();
    rings_mutex_.unlock();
}

void AsyncWriter::seal() noexcept {
    attention_.fetch_or(kSealed, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // before any look at the rings' ends
}

void AsyncWriter::visit_unwritten(std::size_t sink, Visitor visit, void* context) const noexcept {
    for (const Ring* ring : rings_) {
        ring->crash_read = std::max(ring->queue.released(), ring->handed_upto[sink].load(std::memory_order_acquire));
    }
    for (;;) {  // the earliest next record of all rings, until none is left
        const Ring* first = nullptr;
        std::int64_t first_key = 0;
        for (const Ring* ring : rings_) {
            if (ring->crash_read >= ring->queue.published()) continue;
            const std::int64_t key = get<std::int64_t>(ring->queue.entry_at(ring->crash_read).data + kOrderKeyAt);
            if (first == nullptr || key < first_key) {
                first = ring;
                first_key = key;
            }
        }
        if (first == nullptr) return;
        const SpscRing::Entry entry = first->queue.entry_at(first->crash_read);
        visit(context, view_of(codec_, entry.data));
        first->crash_read = entry.next;
    }
}

void accumulate(AsyncMetrics& total, const AsyncMetrics& more) noexcept {
    total.accepted_records += more.accepted_records;
    total.accepted_bytes += more.accepted_bytes;
    total.dropped_records += more.dropped_records;
    total.blocked_nanos += more.blocked_nanos;
}

}  // namespace fieldlog::detail
