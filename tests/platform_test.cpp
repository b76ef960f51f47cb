// SPDX-License-Identifier: MIT
// The platform layer (base/platform.hpp): each facility works, and a build runs the path it was
// built for, Linux's or the portable fallback (FIELDLOG_PORTABLE), so that CI's portable build
// is known to test the fallbacks.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "base/platform.hpp"
#include "base/thread_id.hpp"
#include "record/thread_context.hpp"

namespace {

using namespace std::chrono_literals;
using fieldlog::detail::kernel_thread_id;

int kernel_id_of_another_thread() {
    int id = 0;
    std::thread([&id] { id = kernel_thread_id(); }).join();
    return id;
}

}  // namespace

TEST_CASE("a thread's id is the kernel's on Linux, a number of the library's in the portable core", "[platform]") {
    const int mine = kernel_thread_id();
    CHECK(mine == kernel_thread_id());  // asked again: the same
    const int other = kernel_id_of_another_thread();
    CHECK(other > 0);
    CHECK(other != mine);
    if (FIELDLOG_LINUX_FACILITIES) {
        CHECK(mine == static_cast<int>(::syscall(SYS_gettid)));
    } else {
        CHECK(mine != static_cast<int>(::syscall(SYS_gettid)));  // numbered, from 1: never the main thread's pid
        CHECK(mine < other);  // in the order they first asked
    }
}

TEST_CASE("configuration is published with the process barrier on Linux, with the readers' fences in the portable core",
          "[platform]") {
    // Linux 4.14 and later have the barrier (membarrier's private expedited command).
    CHECK(fieldlog::detail::g_light_readers == static_cast<bool>(FIELDLOG_LINUX_FACILITIES));
}

TEST_CASE("wait_on returns when its word changes and is woken, or when its time is up", "[platform]") {
    std::atomic<std::uint32_t> word{0};
    fieldlog::detail::wait_on(word, 0, 20ms);  // nobody wakes it: returns all the same

    std::atomic<bool> returned{false};
    std::thread sleeper([&] {
        fieldlog::detail::wait_on(word, 0, 60s);
        returned.store(true);
    });
    std::this_thread::sleep_for(20ms);
    word.store(1);
    fieldlog::detail::wake_all(word);
    sleeper.join();  // would hang a minute without the wake
    CHECK(returned.load());

    const auto again = std::chrono::steady_clock::now();
    fieldlog::detail::wait_on(word, 0, 60s);  // the word is no longer 0: returns at once
    CHECK(std::chrono::steady_clock::now() - again < 30s);
}

TEST_CASE("random bytes differ from call to call", "[platform]") {
    std::set<std::uint64_t> seen;
    for (int i = 0; i < 8; ++i) {
        std::uint64_t value = 0;
        REQUIRE(fieldlog::detail::random_bytes(&value, sizeof value));
        seen.insert(value);
    }
    CHECK(seen.size() == 8);
    unsigned char large[1000] = {};  // more than getentropy gives in one call
    REQUIRE(fieldlog::detail::random_bytes(large, sizeof large));
    CHECK(std::set<unsigned char>(std::begin(large), std::end(large)).size() > 100);
}

TEST_CASE("the program's name is glibc's on Linux, and the portable core's only where the system says it", "[platform]") {
    if (FIELDLOG_LINUX_FACILITIES) {
        CHECK(fieldlog::detail::program_name() == program_invocation_short_name);
        CHECK(fieldlog::detail::unknown_service_name() == std::string("unknown_service:") + program_invocation_short_name);
    } else {
        // glibc has no getprogname(): the portable core does not know the name here.
        CHECK(fieldlog::detail::program_name().empty());
        CHECK(fieldlog::detail::unknown_service_name() == "unknown_service");
    }
}
