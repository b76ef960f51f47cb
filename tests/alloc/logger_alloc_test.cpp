// SPDX-License-Identifier: MIT
// The hot path never touches the heap: after one warm-up call per thread, 100,000 records with
// every field kind through the file, stdout and null sinks on 2 threads allocate nothing; nor
// do otel records.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "alloc/alloc_counter.hpp"
#include "support/test_support.hpp"

using namespace std::chrono_literals;

namespace {

struct User {
    std::string name;
    std::string email;
    std::chrono::sys_seconds created;
};

void fieldlog_encode(fieldlog::ValueEncoder& enc, const User& u) {
    enc.value(fieldlog::Object{{"name", u.name}, {"email", u.email}, {"createdAt", u.created}});
}

struct Inputs {
    std::string owned = "an owned std::string with some length to it";
    std::vector<int> ints{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    std::array<std::byte, 8> raw{};
    std::error_code error = std::make_error_code(std::errc::timed_out);
    User user{"Jane Doe", "jane@example.com", std::chrono::sys_seconds(std::chrono::seconds(1'600'000'000))};
    std::vector<User> users = std::vector<User>(3, user);
};

void log_every_kind(const fieldlog::Logger& log, const Inputs& in, int i) {
    log.info("every kind", {{"i", i},
                            {"u", 42u},
                            {"d", 3.25},
                            {"b", true},
                            {"null", nullptr},
                            {"sv", std::string_view("view")},
                            {"cstr", "literal \"quoted\"\n"},
                            {"owned", in.owned},
                            {"dur", 1250us},
                            {"when", std::chrono::system_clock::now()},
                            {"err", in.error},
                            {"bytes", fieldlog::Bytes{in.raw}},
                            {"obj", fieldlog::Object{{"k", 1}, {"nested", fieldlog::Array{1, "x"}}}},
                            {"ints", in.ints},
                            {"user", in.user},
                            {"users", in.users},
                            {"bad_utf8", "\xFF\xC0"}});
    log.warn("formatted {} of {}", i, in.owned);
}

/// Points fd 1 at /dev/null while alive, so the stdout sink writes for real without noise.
class StdoutToDevNull {
public:
    StdoutToDevNull() : saved_(::dup(STDOUT_FILENO)) {
        const int null_fd = ::open("/dev/null", O_WRONLY);
        ::dup2(null_fd, STDOUT_FILENO);
        ::close(null_fd);
    }
    ~StdoutToDevNull() {
        ::dup2(saved_, STDOUT_FILENO);
        ::close(saved_);
    }
    StdoutToDevNull(const StdoutToDevNull&) = delete;
    StdoutToDevNull& operator=(const StdoutToDevNull&) = delete;

private:
    int saved_;
};

}  // namespace

TEST_CASE("logging every field kind to file, stdout and null sinks allocates nothing", "[alloc]") {
    const fieldlog_test::TempDir dir;
    const StdoutToDevNull quiet;
    fieldlog::configure({.level = fieldlog::Level::info,
                         .sinks = {{.target = fieldlog::FileSinkOptions{.path = dir.file("alloc.log")}},
                                   {.target = fieldlog::StdoutSinkOptions{}},
                                   {.target = std::make_shared<fieldlog::NullSink>()}}});
    const fieldlog::Logger log = fieldlog::get("alloc").with({{"service", "checkout"}, {"version", 3}});
    const Inputs inputs;

    constexpr int kThreads = 2;
    constexpr int kRecords = 100'000;
    std::atomic<int> warmed{0};
    std::atomic<bool> go{false};
    std::atomic<std::uint64_t> during{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            log_every_kind(log, inputs, -1);  // warm-up: thread context, time zone cache
            warmed.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < kRecords; ++i) log_every_kind(log, inputs, i);
        });
    }
    while (warmed.load() < kThreads) std::this_thread::yield();
    const std::uint64_t before = fieldlog_test::allocations();
    go.store(true);
    for (auto& thread : threads) thread.join();
    during = fieldlog_test::allocations() - before;
    // std::thread::join and the yield loop allocate nothing; everything counted came from logging.
    CHECK(during.load() == 0);
    fieldlog_test::release_sinks();
    CHECK(fieldlog_test::read_lines(dir.file("alloc.log")).size() == 2u * (kThreads * (kRecords + 1)));
}

TEST_CASE("otel records with a trace scope, call facts and a resource allocate nothing", "[alloc][otel]") {
    const fieldlog_test::TempDir dir;
    fieldlog::configure({.level = fieldlog::Level::info,
                         .format = fieldlog::Format::otel,
                         .caller = fieldlog::Caller::with_function,
                         .tid = true,
                         .resource = {{"service.name", std::string("checkout")}, {"service.instance.id", std::int64_t{7}}},
                         .sinks = {{.target = fieldlog::FileSinkOptions{.path = dir.file("otel.log")}}}});
    const fieldlog::Logger log = fieldlog::get("alloc").with({{"service", "checkout"}, {"version", 3}});
    const Inputs inputs;
    constexpr int kRecords = 20'000;
    const fieldlog::Scope trace{fieldlog::TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")};
    const fieldlog::Scope request{{"request_id", "r1"}};
    log_every_kind(log, inputs, -1);  // warm-up: thread context, the scope's otel encoding
    const std::uint64_t before = fieldlog_test::allocations();
    for (int i = 0; i < kRecords; ++i) log_every_kind(log, inputs, i);
    CHECK(fieldlog_test::allocations() - before == 0);
    fieldlog_test::release_sinks();
    const std::vector<std::string> lines = fieldlog_test::read_lines(dir.file("otel.log"));
    REQUIRE(lines.size() == 2u * (kRecords + 1));
    CHECK(lines.back().find(R"(,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736")") != std::string::npos);
}

TEST_CASE("a kept field list with nested values logs without allocating, sync and async, and its copy allocates per list",
          "[alloc][fields]") {
    const fieldlog_test::TempDir dir;
    const std::vector<fieldlog::Field> kept{
        {"user", fieldlog::Object{{"name", "jane"}, {"roles", fieldlog::Array{"admin", fieldlog::Object{{"since", 2019}}}}}},
        {"ids", fieldlog::Array{1, 2, fieldlog::Array{3}}}};
    constexpr int kRecords = 10'000;
    for (const bool async : {false, true}) {
        fieldlog::configure({.level = fieldlog::Level::info,
                             .async = {.enabled = async},
                             .sinks = {{.target = fieldlog::FileSinkOptions{.path = dir.file("kept.log")}}}});
        const fieldlog::Logger log = fieldlog::get("alloc");
        log.info("kept", kept);  // warm-up: thread context, the async writer
        fieldlog::flush();
        const std::uint64_t before = fieldlog_test::allocations();
        for (int i = 0; i < kRecords; ++i) log.info("kept", kept);
        fieldlog::flush();
        CHECK(fieldlog_test::allocations() - before == 0);
    }
    fieldlog_test::release_sinks();
    const std::vector<std::string> lines = fieldlog_test::read_lines(dir.file("kept.log"));
    REQUIRE(lines.size() == 2u * (kRecords + 1));
    CHECK(lines.back().ends_with(
        R"("msg":"kept","user":{"name":"jane","roles":["admin",{"since":2019}]},"ids":[1,2,[3]]})"));

    // The copy's storage, and one block for each of its five nested brace lists.
    const std::uint64_t before_copy = fieldlog_test::allocations();
    const std::vector<fieldlog::Field> copy = kept;
    CHECK(fieldlog_test::allocations() - before_copy == 1 + 5);
    CHECK(copy.size() == kept.size());
}

TEST_CASE("The allocation counter sees every form of operator new it replaces", "[alloc]") {
    // Without this, a counter that never counted would make every zero above meaningless. Each
    // pointer escapes (as benchmark::DoNotOptimize does it) so no new/delete pair is elided.
    const auto escape = [](void* p) { asm volatile("" : : "r"(p) : "memory"); };
    const std::uint64_t before = fieldlog_test::allocations();
    auto* one = new int(1);
    escape(one);
    delete one;
    auto* many = new char[100];
    escape(many);
    delete[] many;
    auto* aligned = new (std::align_val_t{64}) char[64];
    escape(aligned);
    ::operator delete[](aligned, std::align_val_t{64});
    auto* quiet = new (std::nothrow) long(2);
    escape(quiet);
    delete quiet;
    std::vector<int> grown(1000);
    escape(grown.data());
    CHECK(fieldlog_test::allocations() - before == 5);
}
