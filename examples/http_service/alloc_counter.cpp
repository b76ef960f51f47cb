// Replaces the global allocation functions (all throwing, nothrow, sized and aligned forms) with
// ones that count each call under the calling thread's AllocCause. The cause is a plain
// thread_local (constant-initialised, so reading it inside operator new needs no TLS init).
#include "alloc_counter.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace http_service {
namespace {

// One cache line each: service threads and the loggers' threads count on different cores.
struct alignas(64) Counter {
    std::atomic<std::uint64_t> value{0};
};
Counter g_counts[3];

constinit thread_local AllocCause t_cause = AllocCause::logger_thread;

void* allocate(std::size_t size, std::size_t alignment = 0) {
    g_counts[static_cast<std::size_t>(t_cause)].value.fetch_add(1, std::memory_order_relaxed);
    if (size == 0) size = 1;
    void* p = alignment > alignof(std::max_align_t)
                  ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
                  : std::malloc(size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

std::uint64_t read(AllocCause cause) noexcept {
    return g_counts[static_cast<std::size_t>(cause)].value.load(std::memory_order_relaxed);
}

}  // namespace

AllocCounts alloc_counts() noexcept {
    return AllocCounts{.service = read(AllocCause::service),
                       .logging_call = read(AllocCause::logging_call),
                       .logger_thread = read(AllocCause::logger_thread)};
}

void mark_service_thread() noexcept { t_cause = AllocCause::service; }

LoggingCall::LoggingCall() noexcept : previous_(t_cause) {
    if (previous_ == AllocCause::service) t_cause = AllocCause::logging_call;
}

LoggingCall::~LoggingCall() { t_cause = previous_; }

}  // namespace http_service

void* operator new(std::size_t size) { return http_service::allocate(size); }
void* operator new[](std::size_t size) { return http_service::allocate(size); }
void* operator new(std::size_t size, std::align_val_t a) { return http_service::allocate(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return http_service::allocate(size, static_cast<std::size_t>(a)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return http_service::allocate(size);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return http_service::allocate(size);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
