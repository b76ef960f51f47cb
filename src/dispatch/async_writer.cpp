// The ring and the writer thread. A slot is a 32-byte header and the record's bytes, 8-aligned;
// its first word is 0 until the record is committed (then its size, or size|padding for a
// gap at the ring's end). The writer zeroes what it
// consumed before handing the space back, so a 0 there always means "not yet".
// Callers: reserve with one CAS on head_, copy, commit with one release store. Writer: read
// committed slots from tail_, sort the batch by time, hand each sink its share, zero, release.
// Sealing sets head_'s top bit: every reservation after it fails its room check, so the seal
// costs the record path nothing.
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
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kPaddingBit = 0x8000'0000u;
constexpr std::uint64_t kSealedBit = std::uint64_t{1} << 63;  // in head_: nothing more is accepted
constexpr std::size_t kHeaderSize = 40;
constexpr std::size_t kMaxCapacity = std::size_t{1} << 30;  // sizes must fit below kPaddingBit
constexpr std::size_t kMaxBatch = 1024;
// The writer sleeps as soon as it finds the ring empty, at most kIdleSleep; callers never pay
// for a wake-up unless the ring is more than half full. It does not spin first: under a
// steady trickle of records a spinning writer never sleeps and writes them one at a time,
// taking a core from the threads that log (the example service lost 10-15% of its requests/s
// to it on 2 cores).
constexpr auto kIdleSleep = 1ms;
// How long the crash path's walk waits for a reserved slot to be committed.
constexpr auto kCommitWait = 500ms;

// Header layout after the size word (offsets in bytes).
constexpr std::size_t kLengthAt = 4;
constexpr std::size_t kSecondsAt = 8;
constexpr std::size_t kOrderKeyAt = 16;
constexpr std::size_t kNanosAt = 24;
constexpr std::size_t kChannelAt = 28;
constexpr std::size_t kLevelAt = 30;
constexpr std::size_t kAdmittedAt = 32;  // the logger's LoggerMask

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

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

std::atomic_ref<std::uint32_t> size_word(char* slot) noexcept {
    return std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(slot));
}

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
    const timespec relative{static_cast<time_t>(timeout.count() / 1'000'000'000),
                            static_cast<long>(timeout.count() % 1'000'000'000)};
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &relative, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void sleep_for(std::chrono::nanoseconds d) noexcept {
    timespec t{static_cast<time_t>(d.count() / 1'000'000'000), static_cast<long>(d.count() % 1'000'000'000)};
    while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
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

}  // namespace

AsyncWriter::AsyncWriter(const Pipeline& pipeline, const AsyncConfig& config)
    : pipeline_(pipeline),
      capacity_(ring_capacity(config.queue_bytes)),
      mask_(capacity_ - 1),
      overflow_(config.overflow),
      ring_(std::make_unique<std::uint32_t[]>(capacity_ / sizeof(std::uint32_t))),  // zeroed, pages touched now
      handed_upto_(std::make_unique<std::atomic<std::uint64_t>[]>(pipeline.routing.sinks.size())),
      batch_(kMaxBatch),
      views_(kMaxBatch * 2) {}

AsyncWriter::~AsyncWriter() { stop(); }

char* AsyncWriter::slot(std::uint64_t position) const noexcept {
    return reinterpret_cast<char*>(ring_.get()) + (position & mask_);
}

bool AsyncWriter::committed_at(std::uint64_t position) const noexcept {
    return size_word(slot(position)).load(std::memory_order_acquire) != 0;
}

AsyncWriter::Enqueued AsyncWriter::enqueue(std::uint32_t channel, const RecordView& record, LoggerMask admitted) noexcept {
    const std::size_t length = record.bytes.size();
    const std::uint64_t need = (kHeaderSize + length + 7) & ~std::uint64_t{7};
    if (need > capacity_ / 2) {
        if (overflow_ == OverflowPolicy::block) return Enqueued::too_large;
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return Enqueued::dropped;
    }

    std::uint64_t head = head_.load(std::memory_order_relaxed);
    std::uint64_t total = 0;
    std::uint64_t tail = 0;
    for (;;) {
        const std::uint64_t to_end = capacity_ - (head & mask_);
        total = need <= to_end ? need : to_end + need;  // a gap to the end, then from the start
        tail = tail_.load(std::memory_order_acquire);
        if (head + total - tail > capacity_) {
            if (const Enqueued outcome = wait_for_space(total); outcome != Enqueued::queued) return outcome;
            head = head_.load(std::memory_order_relaxed);
            continue;
        }
        // seq_cst: ordered against seal() (a CAS after it fails: head_ changed).
        if (head_.compare_exchange_weak(head, head + total, std::memory_order_seq_cst, std::memory_order_relaxed)) break;
    }

    const std::uint64_t at = head + total - need;
    if (at != head) size_word(slot(head)).store(static_cast<std::uint32_t>(total - need) | kPaddingBit, std::memory_order_release);
    char* p = slot(at);
    put(p + kLengthAt, static_cast<std::uint32_t>(length));
    put(p + kSecondsAt, record.time.seconds);
    put(p + kOrderKeyAt, order_key(record.time));
    put(p + kNanosAt, record.time.nanos);
    put(p + kChannelAt, static_cast<std::uint16_t>(channel));
    put(p + kLevelAt, static_cast<std::uint8_t>(record.level));
    put(p + kAdmittedAt, admitted);
    std::memcpy(p + kHeaderSize, record.bytes.data(), length);
    size_word(p).store(static_cast<std::uint32_t>(need), std::memory_order_release);

    const std::uint64_t used = head + total - tail;
    if (used > high_water_.load(std::memory_order_relaxed)) raise_high_water(used);
    if (thread_state_.load(std::memory_order_relaxed) == ThreadState::needs_thread) [[unlikely]] ensure_running();
    if (used > capacity_ / 2 && writer_sleeping_.load(std::memory_order_relaxed)) wake_writer();
    return Enqueued::queued;
}

void AsyncWriter::raise_high_water(std::uint64_t used) noexcept {
    std::uint64_t seen = high_water_.load(std::memory_order_relaxed);
    while (used > seen && !high_water_.compare_exchange_weak(seen, used, std::memory_order_relaxed)) {
    }
}

AsyncWriter::Enqueued AsyncWriter::wait_for_space(std::uint64_t total) noexcept {
    if (overflow_ == OverflowPolicy::drop) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return Enqueued::dropped;
    }
    const auto start = std::chrono::steady_clock::now();
    ensure_running();
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
        const std::uint32_t seen = progress_.load(std::memory_order_seq_cst);
        if (head_.load(std::memory_order_relaxed) + total - tail_.load(std::memory_order_acquire) <= capacity_) break;
        wake_writer();
        futex_wait(progress_, seen, kIdleSleep);
        ensure_running();
    }
    waiters_.fetch_sub(1, std::memory_order_relaxed);
    blocked_nanos_.fetch_add(elapsed_nanos(start), std::memory_order_relaxed);
    return Enqueued::queued;  // there was room a moment ago: try again
}

void AsyncWriter::wake_writer() noexcept {
    if (writer_sleeping_.load(std::memory_order_seq_cst)) {
        wake_.fetch_add(1, std::memory_order_release);
        futex_wake_all(wake_);
    }
}

void AsyncWriter::start() {
    ThreadState expected = ThreadState::not_started;
    if (thread_state_.compare_exchange_strong(expected, ThreadState::running) && !start_thread()) {
        thread_state_.store(ThreadState::needs_thread);
    }
}

void AsyncWriter::ensure_running() noexcept {
    ThreadState expected = ThreadState::needs_thread;
    if (thread_state_.compare_exchange_strong(expected, ThreadState::running) && !start_thread()) {
        thread_state_.store(ThreadState::needs_thread);
    }
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

void AsyncWriter::drain() noexcept {
    const std::uint64_t target = head_.load(std::memory_order_seq_cst) & ~kSealedBit;
    if (tail_.load(std::memory_order_acquire) >= target) return;
    ensure_running();
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
        const std::uint32_t seen = progress_.load(std::memory_order_seq_cst);
        if (tail_.load(std::memory_order_acquire) >= target) break;
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
        if ((head_.load(std::memory_order_acquire) & ~kSealedBit) == read_) {
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
        if (write_some()) continue;
        if (stopping_.load(std::memory_order_acquire) && read_ == (head_.load(std::memory_order_acquire) & ~kSealedBit)) break;
        idle_wait();
    }
    writer_tid_.store(0, std::memory_order_release);
}

void AsyncWriter::idle_wait() noexcept {
    const std::uint32_t seen = wake_.load(std::memory_order_acquire);
    writer_sleeping_.store(true, std::memory_order_seq_cst);
    if (!committed_at(read_) && !stopping_.load(std::memory_order_seq_cst)) {
        futex_wait(wake_, seen, kIdleSleep);
    }
    writer_sleeping_.store(false, std::memory_order_relaxed);
}

bool AsyncWriter::write_some() noexcept {
    const std::uint64_t begin = read_;
    const std::size_t count = collect(capacity_ / 4);
    if (read_ == begin) return false;
    if (count > 0) write_batch(count);
    release(read_);
    return true;
}

std::size_t AsyncWriter::collect(std::uint64_t limit) noexcept {
    std::uint64_t position = read_;
    std::size_t count = 0;
    while (count < batch_.size() && position - read_ < limit) {
        char* p = slot(position);
        const std::uint32_t size = size_word(p).load(std::memory_order_acquire);
        if (size == 0) break;
        if ((size & kPaddingBit) == 0) batch_[count++] = Pending{position, get<std::int64_t>(p + kOrderKeyAt)};
        position += size & ~kPaddingBit;
    }
    read_ = position;
    // Stable insertion sort: batches are nearly in order already, and equal keys keep ring
    // order (which is each thread's own order).
    for (std::size_t i = 1; i < count; ++i) {
        const Pending moving = batch_[i];
        std::size_t j = i;
        for (; j > 0 && batch_[j - 1].order_key > moving.order_key; --j) batch_[j] = batch_[j - 1];
        batch_[j] = moving;
    }
    return count;
}

void AsyncWriter::write_batch(std::size_t count) noexcept {
    RecordView* all = views_.data();
    RecordView* chosen = views_.data() + kMaxBatch;
    std::uint16_t channel_of[kMaxBatch];
    LoggerMask admitted_of[kMaxBatch];
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const char* p = slot(batch_[i].position);
        const auto length = get<std::uint32_t>(p + kLengthAt);
        all[i] = RecordView{{p + kHeaderSize, length},
                            static_cast<Level>(get<std::uint8_t>(p + kLevelAt)),
                            Timestamp(get<std::int64_t>(p + kSecondsAt), get<std::uint32_t>(p + kNanosAt))};
        channel_of[i] = get<std::uint16_t>(p + kChannelAt);
        admitted_of[i] = get<LoggerMask>(p + kAdmittedAt);
        bytes += length;
    }
    const RoutingTable& routing = pipeline_.routing;
    for (std::size_t s = 0; s < routing.sinks.size(); ++s) {
        std::span<const RecordView> share(all, count);
        if (!routing.takes_everything(s)) {
            const LoggerMask filter = routing.filter_of(s);
            std::size_t n = 0;
            for (std::size_t i = 0; i < count; ++i) {
                if (all[i].level >= routing.lowest(s, channel_of[i]) && (filter == 0 || (admitted_of[i] & filter) != 0)) {
                    chosen[n++] = all[i];
                }
            }
            share = std::span<const RecordView>(chosen, n);
        }
        Sink& sink = *routing.sinks[s]->sink;
        const std::lock_guard lock(sink.mutex());
        if (!share.empty()) deliver_batch(sink, share);
        handed_upto_[s].store(read_, std::memory_order_relaxed);  // published by the unlock
    }
    accepted_records_.store(accepted_records_.load(std::memory_order_relaxed) + count, std::memory_order_relaxed);
    accepted_bytes_.store(accepted_bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}

void AsyncWriter::release(std::uint64_t upto) noexcept {
    const std::uint64_t from = tail_.load(std::memory_order_relaxed);
    const std::uint64_t length = upto - from;
    const std::uint64_t first = std::min<std::uint64_t>(length, capacity_ - (from & mask_));
    std::memset(slot(from), 0, first);
    if (length > first) std::memset(slot(0), 0, length - first);
    tail_.store(upto, std::memory_order_release);
    progress_.fetch_add(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) > 0) futex_wake_all(progress_);
}

AsyncMetrics AsyncWriter::metrics() const noexcept {
    return AsyncMetrics{.accepted_records = accepted_records_.load(std::memory_order_relaxed),
                        .accepted_bytes = accepted_bytes_.load(std::memory_order_relaxed),
                        .dropped_records = dropped_.load(std::memory_order_relaxed),
                        .queue_high_water = high_water_.load(std::memory_order_relaxed),
                        .queue_capacity = capacity_,
                        .blocked_nanos = blocked_nanos_.load(std::memory_order_relaxed)};
}

void AsyncWriter::after_fork_in_child() noexcept {
    // The parent's records are the parent's to write: drop them here, including slots a parent
    // thread had reserved but not yet committed (it does not exist in this process).
    const std::uint64_t from = tail_.load(std::memory_order_relaxed);
    const std::uint64_t upto = head_.load(std::memory_order_relaxed) & ~kSealedBit;
    const std::uint64_t length = std::min<std::uint64_t>(upto - from, capacity_);
    const std::uint64_t first = std::min<std::uint64_t>(length, capacity_ - (from & mask_));
    std::memset(slot(from), 0, first);
    if (length > first) std::memset(slot(0), 0, length - first);
    read_ = upto;
    tail_.store(upto, std::memory_order_relaxed);
    waiters_.store(0, std::memory_order_relaxed);
    writer_sleeping_.store(false, std::memory_order_relaxed);
    writer_tid_.store(0, std::memory_order_relaxed);
    if (thread_state_.load(std::memory_order_relaxed) == ThreadState::running) {
        thread_state_.store(ThreadState::needs_thread, std::memory_order_relaxed);
    }
}

std::uint64_t AsyncWriter::seal() noexcept {
    return head_.fetch_or(kSealedBit, std::memory_order_seq_cst) & ~kSealedBit;
}

std::uint64_t AsyncWriter::visit_unwritten(std::size_t sink, std::uint64_t end, Visitor visit, void* context) const noexcept {
    std::uint64_t position = std::max(tail_.load(std::memory_order_acquire), handed_upto_[sink].load(std::memory_order_acquire));
    while (position < end) {
        const char* p = slot(position);
        std::uint32_t size = size_word(const_cast<char*>(p)).load(std::memory_order_acquire);
        for (auto waited = 0us; size == 0 && waited < kCommitWait; waited += 100us) {
            sleep_for(100us);  // its thread is still copying
            size = size_word(const_cast<char*>(p)).load(std::memory_order_acquire);
        }
        if (size == 0) return position;  // never committed: its thread died (the one that crashed)
        if ((size & kPaddingBit) == 0) {
            const RecordView record{{p + kHeaderSize, get<std::uint32_t>(p + kLengthAt)},
                                    static_cast<Level>(get<std::uint8_t>(p + kLevelAt)),
                                    Timestamp(get<std::int64_t>(p + kSecondsAt), get<std::uint32_t>(p + kNanosAt))};
            visit(context, get<std::uint16_t>(p + kChannelAt), get<LoggerMask>(p + kAdmittedAt), record);
        }
        position += size & ~kPaddingBit;
    }
    return end;
}

void accumulate(AsyncMetrics& total, const AsyncMetrics& more) noexcept {
    total.accepted_records += more.accepted_records;
    total.accepted_bytes += more.accepted_bytes;
    total.dropped_records += more.dropped_records;
    total.blocked_nanos += more.blocked_nanos;
}

}  // namespace fieldlog::detail
