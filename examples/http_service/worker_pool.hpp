// SPDX-License-Identifier: MIT
// A fixed set of threads draining a bounded ring of jobs, held by value (no heap per job once
// built). The service uses two: one runs httplib's connections (its TaskQueue), one settles
// transactions after the reply. Threads mark themselves as the service's for the allocation
// count, and take the pool's name (load.sh tells the service's threads from a logger's by it).
// post() blocks while the ring is full: back-pressure instead of unbounded memory.
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "alloc_counter.hpp"

namespace http_service {

template <typename Job>
class WorkerPool {
public:
    /// Starts `threads` threads named `name` (at most 15 bytes) that call `run(job)` for each
    /// posted job.
    WorkerPool(const char* name, std::size_t threads, std::size_t capacity, std::function<void(Job&)> run)
        : name_(name), ring_(capacity), run_(std::move(run)) {
        threads_.reserve(threads);
        for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
    }
    ~WorkerPool() { shutdown(); }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    /// Queues `job`, waiting while the ring is full. False once shut down (the job is dropped).
    bool post(Job&& job) {
        std::unique_lock lock(mutex_);
        not_full_.wait(lock, [this] { return count_ < ring_.size() || stopping_; });
        if (stopping_) return false;
        ring_[(head_ + count_) % ring_.size()] = std::move(job);
        ++count_;
        lock.unlock();
        not_empty_.notify_one();
        return true;
    }

    /// Runs every job already queued, then stops and joins the threads. Idempotent.
    void shutdown() {
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        not_empty_.notify_all();
        not_full_.notify_all();
        for (std::thread& t : threads_) {
            if (t.joinable()) t.join();
        }
    }

private:
    void work() {
        mark_service_thread();
        pthread_setname_np(pthread_self(), name_);
        Job job{};
        for (;;) {
            {
                std::unique_lock lock(mutex_);
                not_empty_.wait(lock, [this] { return count_ > 0 || stopping_; });
                if (count_ == 0) return;  // stopping, and nothing left
                job = std::move(ring_[head_]);
                head_ = (head_ + 1) % ring_.size();
                --count_;
            }
            not_full_.notify_one();
            run_(job);
        }
    }

    const char* name_;
    std::vector<Job> ring_;
    std::function<void(Job&)> run_;
    std::mutex mutex_;
    std::condition_variable not_empty_;
    std::condition_variable not_full_;
    std::size_t head_ = 0;
    std::size_t count_ = 0;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace http_service
