// SPDX-License-Identifier: MIT
// A child process for tests/exit_paths_test.cpp: logs numbered records from a few threads (as
// a brace list, and from odd threads as a message template) into a file (or stdout, which the
// parent points at one) and then ends the way it is told (return, exit(), std::terminate, a
// fault, a signal). After each logging call returns it stores the count in a shared progress
// file, so the parent knows exactly which records were accepted before the end. Its signal
// handlers are the ones configure() installs by default, or (`installed`) those of an explicit
// install_signal_handlers() call.
//
//   fieldlog_exit_child <how> <log file> <progress file> <threads> <kill at> <async|sync>
//                       <default|installed> <file|stdout>
//   how: return | exit | terminate | sigterm | segv | abort | stack_overflow | writer_segv
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldlog/fieldlog.hpp"

namespace {

constexpr std::uint64_t kEndless = 50'000'000;  // threads that log until the process dies
constexpr std::uint64_t kFinite = 2'000;        // records per thread for the clean exits

// Counters in memory shared with another process: std::atomic, lock-free and of the plain
// integer's size (std::atomic_ref is not in every standard library yet).
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));

std::atomic<std::uint64_t>* g_progress = nullptr;  // one counter per thread, in a file the parent reads

void report(int thread, std::uint64_t accepted) {
    g_progress[thread].store(accepted, std::memory_order_release);
}

volatile int g_depth_limit = 1 << 30;  // never reached: the stack runs out first

/// A real SIGSEGV (SEGV_ACCERR) that sanitizers do not catch first: a store to a page the
/// process may not write.
void fault() {
    void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile int*>(page) = 1;
}

[[gnu::noinline]] int overflow_stack(int depth) {
    volatile char frame[4096];
    frame[0] = static_cast<char>(depth);
    if (depth >= g_depth_limit) return frame[0];
    return overflow_stack(depth + 1) + frame[0];
}

/// A sink that faults on the writer thread when it meets a record whose message is "boom".
class TripwireSink final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override {
        if (std::string_view(record.bytes.data(), record.bytes.size()).find("\"msg\":\"boom\"") != std::string_view::npos) fault();
    }
    void flush() override {}
};

void end_the_way(std::string_view how) {
    if (how == "segv") fault();
    if (how == "abort") std::abort();
    if (how == "terminate") std::terminate();
    if (how == "stack_overflow") std::printf("%d\n", overflow_stack(0));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 9) {
        std::fprintf(stderr, "usage: %s how log progress threads kill_at async|sync default|installed file|stdout\n",
                     argv[0]);
        return 2;
    }
    const std::string_view how = argv[1];
    const std::string log_path = argv[2];
    const int threads = std::atoi(argv[4]);
    const std::uint64_t kill_at = std::strtoull(argv[5], nullptr, 10);
    const bool async = std::string_view(argv[6]) == "async";
    const bool installed = std::string_view(argv[7]) == "installed";
    const bool to_stdout = std::string_view(argv[8]) == "stdout";

    const rlimit no_core{0, 0};  // the parent checks the signal, not a core file
    ::setrlimit(RLIMIT_CORE, &no_core);

    const int fd = ::open(argv[3], O_RDWR);
    if (fd < 0) return 3;
    void* shared = ::mmap(nullptr, sizeof(std::uint64_t) * static_cast<std::size_t>(threads), PROT_READ | PROT_WRITE,
                          MAP_SHARED, fd, 0);
    if (shared == MAP_FAILED) return 4;
    g_progress = static_cast<std::atomic<std::uint64_t>*>(shared);

    fieldlog::Config config;
    config.level = fieldlog::Level::info;
    config.async = fieldlog::AsyncConfig{.enabled = async, .queue_bytes = 256 * 1024,
                                         .overflow = fieldlog::OverflowPolicy::block};
    config.sinks = {to_stdout ? fieldlog::SinkConfig{}
                              : fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = log_path}}};
    config.crash_handlers = !installed;
    if (how == "writer_segv") config.sinks.push_back(fieldlog::SinkConfig{.target = std::make_shared<TripwireSink>()});
    fieldlog::configure(config);
    const bool clean = how == "return" || how == "exit";
    if (!clean && installed) fieldlog::install_signal_handlers();

    const fieldlog::Logger log = fieldlog::get("child");
    const std::string pad(64 + kill_at % 200, 'x');  // records of varying length
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            const std::uint64_t count = clean ? kFinite : kEndless;
            for (std::uint64_t n = 0; n < count; ++n) {
                if (t == 0 && n == kill_at) {
                    if (how == "writer_segv") {
                        log.info("boom", {{"t", t}, {"n", n}, {"pad", pad}});
                        report(t, n + 1);
                        continue;
                    }
                    end_the_way(how);
                }
                if (t % 2 == 1) {  // a message template: in async mode its values are packed in the ring
                    using namespace fieldlog::literals;
                    log.info("record {t} {n} {pad}"_tpl, t, n, pad);
                } else {
                    log.info("record", {{"t", t}, {"n", n}, {"pad", pad}});
                }
                report(t, n + 1);
            }
        });
    }
    for (std::thread& worker : workers) worker.join();
    if (how == "exit") {
        log.info("record", {{"t", 0}, {"n", kFinite}, {"pad", pad}});
        report(0, kFinite + 1);
        std::exit(7);
    }
    return 0;
}
