// SPDX-License-Identifier: MIT
// A child process for tests/program_life_test.cpp: logs at the edges of a program's life and
// the test reads what reached the file.
//
//   fieldlog_after_main_child <log file> <async|sync> <end>
//   end: return     — main returns; records follow from destructors, atexit and a thread
//        shutdown   — the same after main called fieldlog::shutdown() (they are dropped)
//        shut_first — shutdown() before anything was configured, then a record (nothing on stdout)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "fieldlog/fieldlog.hpp"

namespace {

void log_from(const char* where) { fieldlog::get("life").info("after main", {{"from", where}}); }

struct LogsWhenDestroyed {
    const char* where;
    ~LogsWhenDestroyed() { log_from(where); }
};

// A thread still running after main returned: it logs 100 records once a namespace-scope
// destructor (which runs after fieldlog's exit handler) lets it, and that destructor waits.
std::atomic<bool> g_thread_may_log{false};
std::thread* g_late_thread = nullptr;

struct LetsTheThreadLog {
    ~LetsTheThreadLog() {
        if (g_late_thread == nullptr) return;
        g_thread_may_log.store(true);
        g_late_thread->join();
    }
};

// Made first, so destroyed last: says how many records were dropped after a shutdown().
struct ReportsDrops {
    ~ReportsDrops() {
        std::printf("dropped_after_shutdown=%llu\n",
                    static_cast<unsigned long long>(fieldlog::metrics().dropped_after_shutdown));
    }
} g_reports_drops;

// Constructed before main, so destroyed after fieldlog's exit handler (registered later, at the
// first configure()). Destroyed in reverse order: the thread logs before the destructor record.
LogsWhenDestroyed g_namespace_scope{"namespace-scope static"};
LetsTheThreadLog g_lets_the_thread_log;

void early_atexit() { log_from("atexit registered before configure"); }
void late_atexit() { log_from("atexit registered after configure"); }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s log async|sync return|shutdown|shut_first\n", argv[0]);
        return 2;
    }
    const std::string_view end = argv[3];
    if (end == "shut_first") {
        fieldlog::shutdown();
        fieldlog::get("life").info("after shutdown");
        return 0;
    }

    std::atexit(early_atexit);
    static LogsWhenDestroyed before_configure{"function-local static made before configure"};
    fieldlog::Config config;
    config.async.enabled = std::string_view(argv[2]) == "async";
    config.sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = argv[1]}}};
    fieldlog::configure(config);
    static LogsWhenDestroyed after_configure{"function-local static made after configure"};
    std::atexit(late_atexit);

    g_late_thread = new std::thread([] {
        while (!g_thread_may_log.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        for (int n = 0; n < 100; ++n) fieldlog::get("life").info("late thread", {{"n", n}});
    });
    fieldlog::get("life").info("main returns");
    if (end == "shutdown") fieldlog::shutdown();
    return 0;
}
