// SPDX-License-Identifier: MIT
// The sink mutex: mutual exclusion under contention, try_lock's answer, and a waiter that sleeps
// until the holder lets go (the path a slow sink makes the other threads take).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "fieldlog/sink.hpp"

namespace {

using fieldlog::SinkMutex;

TEST_CASE("the sink lock lets one thread in at a time", "[sink-mutex][concurrent]") {
    SinkMutex lock;
    constexpr int kThreads = 4;
    constexpr int kRounds = 50'000;
    std::uint64_t counter = 0;  // not atomic: only the lock keeps the increments whole
    int inside = 0;
    int most_inside = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < kRounds; ++i) {
                const std::lock_guard guard(lock);
                ++inside;
                most_inside = inside > most_inside ? inside : most_inside;
                ++counter;
                if (i % 1000 == 0) std::this_thread::yield();  // held across a reschedule: others must wait
                --inside;
            }
        });
    }
    for (std::thread& t : threads) t.join();
    CHECK(counter == std::uint64_t{kThreads} * kRounds);
    CHECK(most_inside == 1);
}

TEST_CASE("try_lock fails while the lock is held and succeeds once it is free", "[sink-mutex]") {
    SinkMutex lock;
    REQUIRE(lock.try_lock());
    CHECK_FALSE(lock.try_lock());
    lock.unlock();
    CHECK(lock.try_lock());
    lock.unlock();
}

TEST_CASE("a thread waiting for the lock gets it when the holder unlocks", "[sink-mutex][concurrent]") {
    SinkMutex lock;
    lock.lock();
    std::atomic<bool> started{false};
    std::atomic<bool> acquired{false};
    std::thread waiter([&] {
        started.store(true);
        lock.lock();  // blocks: the main thread holds it
        acquired.store(true);
        lock.unlock();
    });
    while (!started.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the waiter reach its sleep
    CHECK_FALSE(acquired.load());
    lock.unlock();
    waiter.join();
    CHECK(acquired.load());
    CHECK(lock.try_lock());  // and it was given back
    lock.unlock();
}

}  // namespace
