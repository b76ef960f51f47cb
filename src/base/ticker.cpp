// SPDX-License-Identifier: MIT
// The library's background thread: a list of (item, period, next due time) under one mutex,
// one thread sleeping until the earliest due time. It calls each item without holding the list
// lock, and fork() waits until no call is in progress so a child never inherits a half-done one.
#include "base/ticker.hpp"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "base/fork_hooks.hpp"
#include "base/thread_id.hpp"

namespace fieldlog::detail {
namespace {

using Clock = std::chrono::steady_clock;

struct Entry {
    Tickable* item;
    std::chrono::milliseconds period;
    Clock::time_point due;
};

struct Ticker {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<Entry> entries;
    Tickable* running = nullptr;      ///< the item being ticked right now
    std::thread* thread = nullptr;    ///< owned; abandoned (never joined) in a forked child
    std::uint64_t generation = 0;     ///< a thread runs while this equals the value it started with
    bool forking = false;             ///< fork() waits for the tick in progress: start no other
    bool fork_handlers_installed = false;
};

/// Never destroyed: sinks may be closed from atexit handlers and static destructors.
Ticker& ticker() {
    static auto* instance = new Ticker;
    return *instance;
}

void run(std::uint64_t generation) {
    name_this_thread("fieldlog-ticker");
    Ticker& t = ticker();
    std::unique_lock lock(t.mutex);
    while (t.generation == generation) {
        const Clock::time_point now = Clock::now();
        Clock::time_point next = now + std::chrono::hours(1);
        Entry* due = nullptr;
        for (Entry& entry : t.entries) {
            if (entry.due <= now) {
                due = &entry;
                break;
            }
            next = std::min(next, entry.due);
        }
        if (t.forking) {
            t.changed.wait(lock);
            continue;
        }
        if (due == nullptr) {
            t.changed.wait_until(lock, next);
            continue;
        }
        due->due = now + due->period;
        t.running = due->item;
        lock.unlock();
        t.running->tick(now);
        lock.lock();
        t.running = nullptr;
        t.changed.notify_all();
    }
}

void start_thread(Ticker& t) { t.thread = new std::thread(run, ++t.generation); }

void before_fork() {
    Ticker& t = ticker();
    std::unique_lock lock(t.mutex);
    // A tick may take a while (a sink's mutex, which fork() holds by now, is waited for): one
    // that is due again as soon as it ends must not keep this wait from ever seeing none run.
    t.forking = true;
    t.changed.wait(lock, [&] { return t.running == nullptr; });
    lock.release();  // stays locked across fork(); the parent and the child unlock it
}

void after_fork_in_parent() {
    Ticker& t = ticker();
    t.forking = false;
    t.changed.notify_all();
    t.mutex.unlock();
}

void after_fork_in_child() {
    Ticker& t = ticker();
    // The parent's ticker thread was most likely waiting on `changed`: the child inherits a
    // condition variable that counts a waiter which does not exist here, and glibc's
    // notify_all() can then wait forever for that waiter to leave its group. No thread waits
    // in the child, so a fresh one replaces it (the old one is abandoned, not destroyed).
    new (&t.changed) std::condition_variable;
    t.forking = false;
    t.thread = nullptr;  // that thread does not exist here; its object is abandoned, not joined
    ++t.generation;
    if (!t.entries.empty()) start_thread(t);
    t.mutex.unlock();
}

}  // namespace

void add_ticking(Tickable* item, std::chrono::milliseconds period) {
    Ticker& t = ticker();
    const std::lock_guard lock(t.mutex);
    if (!t.fork_handlers_installed) {
        // Through the library's one set of atfork handlers, which take their locks first.
        add_fork_participant(&before_fork, &after_fork_in_parent, &after_fork_in_child);
        t.fork_handlers_installed = true;
    }
    period = std::max(period, std::chrono::milliseconds(1));
    t.entries.push_back(Entry{item, period, Clock::now() + period});
    if (t.thread == nullptr) {
        start_thread(t);
    } else {
        t.changed.notify_all();
    }
}

void remove_ticking(Tickable* item) noexcept {
    Ticker& t = ticker();
    std::unique_lock lock(t.mutex);
    std::erase_if(t.entries, [&](const Entry& entry) { return entry.item == item; });
    t.changed.wait(lock, [&] { return t.running != item; });
    if (!t.entries.empty() || t.thread == nullptr) return;
    std::thread* last = t.thread;
    t.thread = nullptr;
    ++t.generation;
    t.changed.notify_all();
    lock.unlock();
    last->join();
    delete last;
}

}  // namespace fieldlog::detail
