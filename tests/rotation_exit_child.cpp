// SPDX-License-Identifier: MIT
// A child process for tests/rotation_exit_test.cpp: logs numbered records from two threads
// into a file sink that rotates often and gzips the rotated files, then ends the way it is told
// (return from main, exit(), abort() or SIGTERM from the parent, each through the handlers
// configure() installs by default, or SIGKILL from the parent). After
// each logging call returns it stores the count in a shared progress file, so the parent knows
// which records were accepted; it also notes there whether a compression was going on.
//
//   fieldlog_rotation_exit_child <how> <log file> <progress file> <records> <async|sync>
//   how: return | exit | abort | term, kill (log until the parent's signal) | start (the next
//   start: make the sink, then shutdown())
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldlog/fieldlog.hpp"

namespace {

constexpr int kThreads = 2;
constexpr std::uint64_t kEndless = 50'000'000;  // threads that log until the process dies

/// The progress file: one accepted-record count per thread, then 1 when the child ended
/// while a compression was going on (its temporary existed).
// Counters in memory shared with another process: std::atomic, lock-free and of the plain
// integer's size (std::atomic_ref is not in every standard library yet).
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && sizeof(std::atomic<std::uint64_t>) == sizeof(std::uint64_t));

std::atomic<std::uint64_t>* g_progress = nullptr;

void report(int slot, std::uint64_t value) {
    g_progress[slot].store(value, std::memory_order_release);
}

/// Notes whether the worker is compressing now: its hidden temporary exists.
void note_compression(const std::string& log_path) {
    const std::size_t slash = log_path.rfind('/');
    const std::string temp = log_path.substr(0, slash + 1) + "." + log_path.substr(slash + 1) + ".gz.tmp";
    struct stat st {};
    report(kThreads, ::stat(temp.c_str(), &st) == 0 ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s how log progress records async|sync\n", argv[0]);
        return 2;
    }
    const std::string_view how = argv[1];
    const std::string log_path = argv[2];
    const std::uint64_t records = std::strtoull(argv[4], nullptr, 10);
    const bool async = std::string_view(argv[5]) == "async";

    const rlimit no_core{0, 0};  // the parent checks the files, not a core
    ::setrlimit(RLIMIT_CORE, &no_core);

    const int fd = ::open(argv[3], O_RDWR);
    if (fd < 0) return 3;
    void* shared = ::mmap(nullptr, sizeof(std::uint64_t) * (kThreads + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (shared == MAP_FAILED) return 4;
    g_progress = static_cast<std::atomic<std::uint64_t>*>(shared);

    fieldlog::Config config;
    config.level = fieldlog::Level::info;
    config.async = fieldlog::AsyncConfig{.enabled = async, .queue_bytes = 256 * 1024,
                                         .overflow = fieldlog::OverflowPolicy::block};
    // Small files, many kept, the slowest level: the worker is mostly busy compressing. Before
    // SIGKILL each record is written through, so that an accepted record is in the file.
    config.sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{
                        .path = log_path, .buffer_size = how == "kill" ? 0U : 256U * 1024, .max_size = 192 * 1024,
                        .keep = 1000, .compress = fieldlog::FileCompression::gzip, .compression_level = 9}}};
    fieldlog::configure(config);
    if (how == "start") {
        fieldlog::shutdown();
        return 0;
    }

    const fieldlog::Logger log = fieldlog::get("child");
    const bool endless = how == "kill" || how == "term" || how == "abort";
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t) {
        workers.emplace_back([&, t] {
            // A pad that changes with each record, so that deflate has work to do.
            std::uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(t + 1);
            std::string pad(96, ' ');
            const std::uint64_t count = endless ? kEndless : records / kThreads;
            for (std::uint64_t n = 0; n < count; ++n) {
                if (how == "abort" && t == 0 && n == records / kThreads) {
                    note_compression(log_path);
                    std::abort();
                }
                for (char& c : pad) {
                    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                    c = "0123456789abcdef"[state >> 60];
                }
                log.info("record", {{"t", t}, {"n", n}, {"pad", pad}});
                report(t, n + 1);
            }
        });
    }
    for (std::thread& worker : workers) worker.join();
    note_compression(log_path);
    if (how == "exit") std::exit(7);
    return 0;
}
