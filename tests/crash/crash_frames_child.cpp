// SPDX-License-Identifier: MIT
// A child process for tests/crash/crash_frames_test.py: logs numbered records, then crashes in
// known functions, so that the `fatal` record's frames can be checked against the call chain.
// Built with -g (the symbolizing tool's line numbers), -rdynamic (names in the handler) and
// without sibling calls (each function of the chain keeps its frame). Each line marked
// "crash site:" is where its case crashes; the test finds them by that mark.
//
//   fieldlog_crash_frames_child <case> <sync|async> <json|logfmt|console|otel|journald> <path>
//   case: executable  a fault in a function of this program
//         library     a fault in a function of a shared library (crash_frames_library.cpp)
//         inlined     a fault in a function inlined into its caller
//         thread      a fault on a thread other than main
//         overflow    a stack overflow by unbounded recursion
//         terminate   an exception nobody catches: std::terminate
//         smashed     a fault with a stack the unwinder cannot walk to its end (crash_frames_smash.cpp)
//   path: the log file, or journald's socket for `journald`
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdio>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "crash_frames_library.hpp"
#include "crash_frames_smash.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fieldlog/sinks/journald_sink.hpp"

namespace crash_site {

// Before the crash, on the crashing thread; none for journald, whose socket queues only a few
// datagrams (the file sink's cases check that none is lost).
int g_records = 50;

/// A page the process may not write: a store to it is a real SIGSEGV.
int* forbidden_page() {
    return static_cast<int*>(::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}

void log_records() {
    const fieldlog::Logger log = fieldlog::get("child");
    for (int n = 0; n < g_records; ++n) log.info("record", {{"n", n}});
}

[[gnu::noinline]] void fault_in_executable(int* page) {
    *static_cast<volatile int*>(page) = 1;  // crash site: executable
}

[[gnu::noinline]] void enter_executable() { fault_in_executable(forbidden_page()); }

[[gnu::always_inline]] inline void inlined_fault(int* page) {
    *static_cast<volatile int*>(page) = 2;  // crash site: inlined
}

[[gnu::noinline]] void enter_inlined() { inlined_fault(forbidden_page()); }

[[gnu::noinline]] void enter_library() { crash_library::fault_in_library(forbidden_page()); }

[[gnu::noinline]] void fault_in_thread(int* page) {
    *static_cast<volatile int*>(page) = 3;  // crash site: thread
}

[[gnu::noinline]] void thread_body() {
    log_records();
    fault_in_thread(forbidden_page());
}

volatile bool g_deeper = true;  // always: the compiler may not see that the recursion never ends

[[gnu::noinline]] int recurse(int depth) {
    volatile char room[512];
    room[0] = static_cast<char>(depth);
    return (g_deeper ? recurse(depth + 1) : 0) + room[0];
}

[[gnu::noinline]] void throw_uncaught() {
    throw std::runtime_error("no more widgets");  // crash site: terminate
}

[[gnu::noinline]] void enter_terminate() { throw_uncaught(); }

fieldlog::SinkConfig sink_for(std::string_view format, const char* path) {
    if (format == "journald") return {.target = fieldlog::JournaldSinkOptions{.socket = path}};
    fieldlog::SinkConfig sink{.target = fieldlog::FileSinkOptions{.path = path}};
    if (format == "logfmt") sink.format = fieldlog::Format::logfmt;
    if (format == "console") sink.format = fieldlog::Format::console;
    if (format == "otel") sink.format = fieldlog::Format::otel;
    return sink;
}

}  // namespace crash_site

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s case sync|async format path\n", argv[0]);
        return 2;
    }
    const std::string_view how = argv[1];
    if (std::string_view(argv[3]) == "journald") crash_site::g_records = 0;
    const rlimit no_core{0, 0};  // the test checks the record, not a core file
    ::setrlimit(RLIMIT_CORE, &no_core);
    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::info,
                                         .async = fieldlog::AsyncConfig{.enabled = std::string_view(argv[2]) == "async"},
                                         .sinks = {crash_site::sink_for(argv[3], argv[4])}});
    if (how == "thread") {
        std::thread(&crash_site::thread_body).join();
        return 1;
    }
    crash_site::log_records();
    if (how == "executable") crash_site::enter_executable();
    if (how == "library") crash_site::enter_library();
    if (how == "inlined") crash_site::enter_inlined();
    if (how == "overflow") return crash_site::recurse(0);
    if (how == "terminate") crash_site::enter_terminate();
    if (how == "smashed") crash_site::enter_smashed(crash_site::forbidden_page());
    return 1;  // no crash: the test fails on the exit status
}
