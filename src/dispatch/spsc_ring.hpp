// SPDX-License-Identifier: MIT
// A bounded single-producer single-consumer ring of variable-size entries: one logging thread
// writes, the async writer thread reads (async_writer.hpp). The ring knows nothing of records:
// an entry is an 8-aligned run of bytes the producer fills in place, so what an entry holds
// (today a record header and the record's owned copy) can change without touching the ring.
//
// Positions count bytes ever written and never wrap; an entry never straddles the ring's end
// (the producer pads to the end and starts again at 0). The producer publishes with one release
// store of head_, the consumer frees with one release store of tail_: neither ever waits for
// the other, and a producer preempted mid-entry holds back nothing but its own ring.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace fieldlog::detail {

class SpscRing {
public:
    /// An entry as the consumer sees it.
    struct Entry {
        const char* data;    ///< the bytes the producer wrote (8-aligned)
        std::uint32_t size;  ///< as reserved
        std::uint64_t next;  ///< position of the entry after it
    };

    /// Allocates the ring without touching it: a new thread's first record does not wait for
    /// the whole ring to be zeroed (touch() or fault_in() make its pages ready off that thread).
    /// `capacity` MUST be a power of two, at least 64.
    explicit SpscRing(std::size_t capacity) : capacity_(capacity), mask_(capacity - 1), bytes_(allocate(capacity)) {}
    SpscRing(const SpscRing&) = delete;
    SpscRing& operator=(const SpscRing&) = delete;

    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    /// Writes every byte of a ring no producer has had yet, so that its producer's first pass
    /// finds every page in place: the first write to a page costs a record a page fault, and on
    /// a VM that shadows the guest's page tables an exit to the hypervisor as well, each a few
    /// microseconds.
    void touch() noexcept { std::memset(bytes_.get(), 0, capacity_); }
    /// Faults the ring's pages in, writable, without writing to them (MADV_POPULATE_WRITE): for
    /// a ring whose producer writes already (so touch() may not), from any thread. This saves
    /// the page faults, not a hypervisor's exits. Where the kernel cannot (before Linux 5.14),
    /// the producer faults the pages in as it reaches them.
    void fault_in() const noexcept {
#if defined(MADV_POPULATE_WRITE)
        const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        const auto start = reinterpret_cast<std::uintptr_t>(bytes_.get());
        const std::uintptr_t begin = (start + page - 1) & ~(page - 1);
        const std::uintptr_t end = (start + capacity_) & ~(page - 1);
        if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#endif
    }
    /// The ring space an entry of `size` bytes takes (with its size word, 8-aligned). An entry
    /// MUST take at most half the ring, so that it fits wherever the ring's end falls.
    [[nodiscard]] static constexpr std::uint64_t footprint(std::size_t size) noexcept {
        return (kPrefix + size + 7) & ~std::uint64_t{7};
    }

    // Producer side (one thread at a time).

    /// Space for an entry of `size` bytes, or nullptr while the ring lacks room for it. Nothing
    /// is visible to the consumer before commit().
    char* try_reserve(std::size_t size) noexcept {
        const std::uint64_t need = footprint(size);
        const std::uint64_t to_end = capacity_ - (write_ & mask_);
        const std::uint64_t total = need <= to_end ? need : to_end + need;
        if (write_ + total - known_tail_ > capacity_) {
            known_tail_ = tail_.load(std::memory_order_acquire);
            if (write_ + total - known_tail_ > capacity_) return nullptr;
        }
        if (total != need) {  // pad to the end: the entry starts again at 0
            put_word(write_, static_cast<std::uint32_t>(to_end) | kPaddingBit);
            write_ += to_end;
        }
        put_word(write_, static_cast<std::uint32_t>(size));
        reserved_end_ = write_ + need;
        return at(write_) + kPrefix;
    }
    /// Publishes the entry try_reserve() returned. `order` seq_cst orders it against a later
    /// load of another flag (the async writer's seal).
    void commit(std::memory_order order = std::memory_order_release) noexcept {
        write_ = reserved_end_;
        head_.store(write_, order);
        // The next entry's first lines, asked for now, while the thread does other work: the
        // first store to a line the consumer has read, or that left this core's cache since the
        // ring's last lap, waits for it otherwise. A prefetch past the ring's end is harmless.
        const char* const next = at(write_);
        for (std::size_t line = 0; line < kPrefetchLines; ++line) __builtin_prefetch(next + line * kLineBytes, 1);
    }
    /// Bytes published and not yet released, as of now (it also refreshes the producer's view
    /// of the consumer, so the next try_reserve() rarely needs to look again).
    [[nodiscard]] std::uint64_t used() noexcept {
        known_tail_ = tail_.load(std::memory_order_acquire);
        return write_ - known_tail_;
    }
    /// A new producer takes over a drained ring (its positions go on from where they were).
    void hand_over() noexcept {
        write_ = head_.load(std::memory_order_relaxed);
        known_tail_ = tail_.load(std::memory_order_relaxed);
    }

    // Consumer side (one thread at a time; the crash path reads the same way).

    /// The end of what the producer has published.
    [[nodiscard]] std::uint64_t published() const noexcept { return head_.load(std::memory_order_acquire); }
    /// How far the consumer has freed.
    [[nodiscard]] std::uint64_t released() const noexcept { return tail_.load(std::memory_order_acquire); }
    /// The entry at `position`, which MUST be below published() and at an entry or a padding.
    [[nodiscard]] Entry entry_at(std::uint64_t position) const noexcept {
        std::uint32_t word = get_word(position);
        if ((word & kPaddingBit) != 0) {
            position += word & ~kPaddingBit;
            word = get_word(position);
        }
        return Entry{at(position) + kPrefix, word, position + footprint(word)};
    }
    /// Frees everything below `upto` for the producer.
    void release(std::uint64_t upto) noexcept { tail_.store(upto, std::memory_order_release); }

private:
    struct Free {
        void operator()(std::uint64_t* bytes) const noexcept { std::free(bytes); }
    };
    static constexpr std::size_t kHugePage = std::size_t{2} << 20;

    /// A ring of a huge page or more is aligned to one and asked to be backed by huge pages
    /// (Linux's transparent huge pages): the producer and the writer then walk it with a TLB
    /// entry per 2 MiB instead of one per 4 KiB page, and a record that crosses into a new page
    /// does not wait for a page walk. Throws bad_alloc.
    static std::uint64_t* allocate(std::size_t capacity) {
        const bool huge = capacity >= kHugePage;
        void* bytes = std::aligned_alloc(huge ? kHugePage : kLineBytes, capacity);
        if (bytes == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
        if (huge) ::madvise(bytes, capacity, MADV_HUGEPAGE);
#endif
        return static_cast<std::uint64_t*>(bytes);
    }

    static constexpr std::size_t kPrefix = 8;  // the size word, and 8-alignment for the entry
    static constexpr std::size_t kLineBytes = 64;
    static constexpr std::size_t kPrefetchLines = 4;  // a short record's whole entry
    static constexpr std::uint32_t kPaddingBit = 0x8000'0000u;

    [[nodiscard]] char* at(std::uint64_t position) const noexcept {
        return reinterpret_cast<char*>(bytes_.get()) + (position & mask_);
    }
    void put_word(std::uint64_t position, std::uint32_t word) noexcept { std::memcpy(at(position), &word, sizeof word); }
    [[nodiscard]] std::uint32_t get_word(std::uint64_t position) const noexcept {
        std::uint32_t word;
        std::memcpy(&word, at(position), sizeof word);
        return word;
    }

    const std::size_t capacity_;
    const std::uint64_t mask_;
    const std::unique_ptr<std::uint64_t[], Free> bytes_;  // read only where the producer wrote

    // Cache lines by who writes them: the producer (head_ and its own view), the consumer (tail_).
    alignas(64) std::atomic<std::uint64_t> head_{0};
    std::uint64_t write_ = 0;         // the producer's head (== head_ between entries)
    std::uint64_t known_tail_ = 0;    // the producer's last look at tail_
    std::uint64_t reserved_end_ = 0;
    alignas(64) std::atomic<std::uint64_t> tail_{0};
};

}  // namespace fieldlog::detail
