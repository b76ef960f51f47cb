// SPDX-License-Identifier: MIT
// The per-thread SPSC ring under the async writer: entries come out whole and in order across
// the ring's end, a full ring refuses until the consumer frees space, a new producer takes over
// a drained ring, and one producer and one consumer thread pass every entry exactly once.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/spsc_ring.hpp"

namespace {

using fieldlog::detail::SpscRing;

bool push(SpscRing& ring, const std::string& text) {
    char* at = ring.try_reserve(text.size());
    if (at == nullptr) return false;
    std::memcpy(at, text.data(), text.size());
    ring.commit();
    return true;
}

/// Takes every published entry, frees it, and returns their texts.
std::vector<std::string> pop_all(SpscRing& ring) {
    std::vector<std::string> out;
    std::uint64_t position = ring.released();
    const std::uint64_t end = ring.published();
    while (position < end) {
        const SpscRing::Entry entry = ring.entry_at(position);
        out.emplace_back(entry.data, entry.size);
        position = entry.next;
    }
    ring.release(position);
    return out;
}

}  // namespace

TEST_CASE("An SPSC ring hands out whole entries in order, also across its end", "[spsc_ring]") {
    SpscRing ring(256);
    std::vector<std::string> sent;
    std::vector<std::string> received;
    for (int round = 0; round < 50; ++round) {
        for (int i = 0; i < 3; ++i) {
            const std::string text =
                "entry " + std::to_string(round) + "." + std::to_string(i) + std::string(static_cast<std::size_t>(round % 17), 'x');
            REQUIRE(push(ring, text));
            sent.push_back(text);
        }
        for (const std::string& text : pop_all(ring)) received.push_back(text);
    }
    CHECK(received == sent);
    CHECK(ring.published() > 256);  // it went round more than once
}

TEST_CASE("A full SPSC ring refuses an entry until the consumer frees space", "[spsc_ring]") {
    SpscRing ring(128);
    CHECK(SpscRing::footprint(20) == 32);
    int accepted = 0;
    while (push(ring, std::string(20, 'a'))) ++accepted;
    CHECK(accepted == 4);  // 4 x 32 bytes
    CHECK(ring.used() == 128);
    CHECK(ring.published() == 128);
    CHECK(pop_all(ring).size() == 4);
    CHECK(push(ring, std::string(20, 'b')));
}

TEST_CASE("An entry that does not fit before the ring's end starts again at its beginning", "[spsc_ring]") {
    SpscRing ring(128);
    REQUIRE(push(ring, std::string(80, 'a')));  // 88 bytes: 40 left before the end
    CHECK(pop_all(ring).size() == 1);
    REQUIRE(push(ring, std::string(50, 'b')));  // 64 bytes: padding to 128, then at 0
    CHECK(ring.published() == 128 + 64);
    const std::vector<std::string> out = pop_all(ring);
    REQUIRE(out.size() == 1);
    CHECK(out[0] == std::string(50, 'b'));
}

TEST_CASE("A new producer takes over a drained SPSC ring where the last one stopped", "[spsc_ring]") {
    SpscRing ring(256);
    REQUIRE(push(ring, "first owner"));
    pop_all(ring);
    ring.hand_over();
    REQUIRE(push(ring, "second owner"));
    CHECK(pop_all(ring) == std::vector<std::string>{"second owner"});
}

TEST_CASE("One producer and one consumer thread pass every entry exactly once, in order", "[spsc_ring][concurrent]") {
    SpscRing ring(1024);
    constexpr std::uint64_t kEntries = 200'000;
    std::thread producer([&ring] {
        for (std::uint64_t n = 0; n < kEntries; ++n) {
            const std::size_t size = 8 + n % 41;  // sizes vary, so the end falls anywhere
            char* at = nullptr;
            while ((at = ring.try_reserve(size)) == nullptr) std::this_thread::yield();
            std::memset(at, static_cast<int>(n % 251), size);
            std::memcpy(at, &n, sizeof n);
            ring.commit();
        }
    });
    std::uint64_t expected = 0;
    std::uint64_t bad = 0;
    while (expected < kEntries) {
        std::uint64_t position = ring.released();
        const std::uint64_t end = ring.published();
        while (position < end) {
            const SpscRing::Entry entry = ring.entry_at(position);
            std::uint64_t n = 0;
            std::memcpy(&n, entry.data, sizeof n);
            const bool tail_right = entry.size == 8 || static_cast<unsigned char>(entry.data[entry.size - 1]) == n % 251;
            if (n != expected || entry.size != 8 + n % 41 || !tail_right) ++bad;
            ++expected;
            position = entry.next;
        }
        ring.release(position);
        if (position == end) std::this_thread::yield();
    }
    producer.join();
    CHECK(bad == 0);
    CHECK(expected == kEntries);
    CHECK(ring.published() == ring.released());
}
