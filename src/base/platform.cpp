// SPDX-License-Identifier: MIT
#include "base/platform.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>

#if FIELDLOG_LINUX_FACILITIES
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <new>

#include "base/fork_hooks.hpp"
#endif

namespace fieldlog::detail {

#if FIELDLOG_LINUX_FACILITIES

void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
    const timespec relative{static_cast<time_t>(timeout.count() / 1'000'000'000),
                            static_cast<long>(timeout.count() % 1'000'000'000)};
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &relative, nullptr, 0);
}

void wake_all(std::atomic<std::uint32_t>& word) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

bool register_process_barrier() noexcept {
    const long supported = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    const long needed = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
    return supported > 0 && (supported & needed) == needed &&
           ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void process_barrier() noexcept {
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    // Registration does not survive every path (e.g. exec); the global command needs none.
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
    std::abort();  // readers already rely on the barrier; continuing could free a pipeline in use
}

bool random_bytes(void* out, std::size_t size) noexcept {
    ssize_t got;
    do {
        got = ::getrandom(out, size, 0);
    } while (got < 0 && errno == EINTR);
    return got == static_cast<ssize_t>(size);
}

std::string_view program_name() noexcept { return program_invocation_short_name; }

#else

namespace {

// Every wait_on shares one condition variable: a wake may rouse other words' sleepers, which
// look at their word and sleep again.
struct Sleepers {
    std::mutex mutex;
    std::condition_variable woken;
};

// Never destroyed: threads may wait during exit.
alignas(Sleepers) unsigned char g_sleepers_storage[sizeof(Sleepers)];

Sleepers& sleepers() noexcept {
    static Sleepers* const s = new (g_sleepers_storage) Sleepers;
    return *s;
}

// fork() in the middle of another thread's wait or wake would leave the child a mutex held by
// a thread it does not have, and a condition variable with waiters it does not have: the child
// gets new ones, so the parent need not hold the mutex across fork(). Made and registered when
// the library loads (see add_fork_participant).
void renew_sleepers() noexcept { new (g_sleepers_storage) Sleepers; }
[[maybe_unused]] const bool g_sleepers_fork_safe =
    (sleepers(), add_fork_participant(nullptr, nullptr, renew_sleepers), true);

}  // namespace

void wait_on(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds timeout) noexcept {
    Sleepers& s = sleepers();
    std::unique_lock lock(s.mutex);
    s.woken.wait_for(lock, timeout, [&] { return word.load(std::memory_order_acquire) != expected; });
}

void wake_all(std::atomic<std::uint32_t>&) noexcept {
    Sleepers& s = sleepers();
    { const std::lock_guard lock(s.mutex); }  // a sleeper between its look and its wait gets this wake
    s.woken.notify_all();
}

bool register_process_barrier() noexcept { return false; }

void process_barrier() noexcept { std::abort(); }  // never called: register_process_barrier() said false

bool random_bytes(void* out, std::size_t size) noexcept {
    auto* bytes = static_cast<unsigned char*>(out);
    while (size > 0) {  // getentropy gives at most 256 bytes a call
        const std::size_t part = size < 256 ? size : 256;
        if (::getentropy(bytes, part) != 0) return false;
        bytes += part;
        size -= part;
    }
    return true;
}

std::string_view program_name() noexcept {
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) || defined(__DragonFly__)
    const char* name = ::getprogname();
    return name != nullptr ? name : "";
#else
    return {};
#endif
}

#endif

std::string unknown_service_name() {
    const std::string_view program = program_name();
    return program.empty() ? std::string("unknown_service") : "unknown_service:" + std::string(program);
}

}  // namespace fieldlog::detail
