// SPDX-License-Identifier: MIT
// A child process for tests/signals_test.cpp: installs a handler of its own for one signal
// before install_signal_handlers() (as a crash reporter or a service's shutdown code would),
// logs numbered records into a file with a long flush interval (so only a flush of ours puts
// them on disk early), gets the signal, and ends. Its own handler reports what it saw, one
// line through write(2), in a marker file.
//
//   fieldlog_signal_child <case> <log file> <marker file>
//   case: abort                  a SIGABRT handler, then abort()
//         segv                   a SA_SIGINFO SIGSEGV handler that restores SIG_DFL, then a real fault
//         sigterm                a SA_SIGINFO SIGTERM handler; SIGTERM to itself, then more records, exit 0
//         sigterm_opted_out      the same with SignalOptions{.terminate = false}
//         abort_opted_out        that configuration, then abort()
//         abort_redact           abort, its records holding a secret in a template's hole whose key Config::redact names
//         abort_filtered         abort, async, the file sink the 71st that names loggers: it takes
//                                every logger but `other`, whose records go to no sink
//         abort_writer_stuck     abort, async, the writer stuck in its sink's first write: the crash
//                                path writes the records after it, with a context no one encoded
//         default_abort[_sync]   no install_signal_handlers(): the application's SIGABRT handler
//         default_segv[_sync]    (or SIGSEGV) before configure(), a crash reporter after it that
//                                chains to what it found, then abort() (or a fault)
// The others call install_signal_handlers() (Config::crash_handlers off) after configure().
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "fieldlog/fieldlog.hpp"

namespace {

constexpr int kRecords = 100;  // before the signal, and again after it when the process lives on

const char* g_log_path = nullptr;
int g_marker = -1;
void* volatile g_fault_page = nullptr;  // volatile: stored before the faulting store, which is volatile
volatile sig_atomic_t g_terminate_handled = 0;

/// Async-signal-safe output for the handlers: text and unsigned numbers into a fixed buffer.
class Line {
public:
    Line& text(std::string_view s) noexcept {
        for (const char c : s) put(c);
        return *this;
    }
    Line& number(std::uint64_t n) noexcept {
        char digits[20];
        int count = 0;
        do {
            digits[count++] = static_cast<char>('0' + n % 10);
            n /= 10;
        } while (n != 0);
        while (count > 0) put(digits[--count]);
        return *this;
    }
    void write_to(int fd) noexcept {
        put('\n');
        [[maybe_unused]] const ssize_t written = ::write(fd, bytes_, length_);
    }

private:
    void put(char c) noexcept {
        if (length_ < sizeof bytes_) bytes_[length_++] = c;
    }
    char bytes_[256]{};
    std::size_t length_ = 0;
};

/// Complete lines in the log file right now, read with open/read (async-signal-safe).
std::uint64_t lines_on_disk() noexcept {
    const int fd = ::open(g_log_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    std::uint64_t lines = 0;
    char chunk[4096];
    for (ssize_t got = 0; (got = ::read(fd, chunk, sizeof chunk)) > 0;) {
        for (ssize_t i = 0; i < got; ++i) lines += chunk[i] == '\n' ? 1 : 0;
    }
    ::close(fd);
    return lines;
}

void on_abort(int signo) { Line().text("abort handler: signal ").number(static_cast<unsigned>(signo)).write_to(g_marker); }

void on_segv(int signo, siginfo_t* info, void*) {
    Line()
        .text("segv handler: signal ")
        .number(static_cast<unsigned>(signo))
        .text(", si_signo ")
        .number(static_cast<unsigned>(info->si_signo))
        .text(", si_code ")
        .number(static_cast<unsigned>(info->si_code))
        .text(info->si_addr == g_fault_page ? ", at the page" : ", elsewhere")
        .write_to(g_marker);
    // What a crash reporter does: the default action follows when the instruction runs again.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(SIGSEGV, &fallback, nullptr);
}

void on_terminate(int signo, siginfo_t* info, void*) {
    sigset_t blocked;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &blocked);
    Line()
        .text("sigterm handler: signal ")
        .number(static_cast<unsigned>(signo))
        .text(", si_signo ")
        .number(static_cast<unsigned>(info->si_signo))
        .text(info->si_pid == ::getpid() ? ", from this process" : ", from elsewhere")
        .text(sigismember(&blocked, SIGTERM) == 1 ? ", SIGTERM blocked" : ", SIGTERM open")
        .text(sigismember(&blocked, SIGUSR1) == 1 ? ", SIGUSR1 blocked" : ", SIGUSR1 open")
        .text(", lines on disk ")
        .number(lines_on_disk())
        .write_to(g_marker);
    g_terminate_handled = 1;
}

/// A crash reporter installed after configure(), as such tools do: it notes the lines on disk
/// when the signal reaches it (none yet: the sink holds them), then passes it to what it found.
struct sigaction g_reporter_found[NSIG];

void on_reporter(int signo, siginfo_t* info, void* context) {
    Line().text("reporter: signal ").number(static_cast<unsigned>(signo)).text(", lines on disk ")
        .number(lines_on_disk()).write_to(g_marker);
    const struct sigaction& found = g_reporter_found[signo];
    if ((found.sa_flags & SA_SIGINFO) != 0) {
        found.sa_sigaction(signo, info, context);
    } else if (found.sa_handler != SIG_DFL && found.sa_handler != SIG_IGN) {
        found.sa_handler(signo);
    }
}

void install_reporter(int signo) {
    struct sigaction action {};
    action.sa_sigaction = &on_reporter;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ::sigaction(signo, &action, &g_reporter_found[signo]);
}

/// The application's handler for the default cases: what is on disk when the signal reaches it.
void on_application_crash(int signo) {
    Line().text("application: signal ").number(static_cast<unsigned>(signo)).text(", lines on disk ")
        .number(lines_on_disk()).write_to(g_marker);
    struct sigaction fallback {};  // a fault's instruction runs again: the default action then
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(signo, &fallback, nullptr);
}

void install_before_fieldlog(int signo, void (*handler)(int, siginfo_t*, void*)) {
    struct sigaction action {};
    action.sa_sigaction = handler;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGUSR1);  // the test checks that its mask is applied
    action.sa_flags = SA_SIGINFO;         // no SA_RESTART: ours must not add it
    ::sigaction(signo, &action, nullptr);
}

/// What install_signal_handlers() left on SIGTERM: the application's handler or ours, and
/// whether system calls it interrupts restart.
void report_sigterm_action() {
    struct sigaction now {};
    ::sigaction(SIGTERM, nullptr, &now);
    Line()
        .text(now.sa_sigaction == &on_terminate ? "SIGTERM action: the application's" : "SIGTERM action: another")
        .text((now.sa_flags & SA_RESTART) != 0 ? ", SA_RESTART" : ", no SA_RESTART")
        .write_to(g_marker);
}

/// The value signals_test.cpp looks for in the log of `abort_redact`: never there.
constexpr std::string_view kSecret = "hunter2-XyZZy";

void log_records(const fieldlog::Logger& log, int from, bool with_secret = false) {
    for (int n = from; n < from + kRecords; ++n) {
        if (with_secret) {  // a template: its message shows the secret too
            using namespace fieldlog::literals;
            log.info("record {api_secret} {n}"_tpl, kSecret, n);
        } else {
            log.info("record", {{"n", n}});
        }
    }
}

/// A sink whose writer never comes back from its first write, as on a hung disk or peer; it
/// writes what the crash path hands it to the log file.
class StuckSink final : public fieldlog::Sink {
public:
    explicit StuckSink(const char* path) : fd_(::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) {}
    void write(const fieldlog::RecordView&) override {
        entered_.store(true);
        for (;;) {
            timespec t{1, 0};
            ::nanosleep(&t, nullptr);
        }
    }
    void flush() override {}
    void write_on_crash(std::span<const fieldlog::RecordView> records) noexcept override {
        for (const fieldlog::RecordView& record : records) {
            [[maybe_unused]] const ssize_t written = ::write(fd_, record.bytes.data(), record.bytes.size());
        }
    }
    void wait_until_entered() const {
        while (!entered_.load()) {
            timespec t{0, 1'000'000};
            ::nanosleep(&t, nullptr);
        }
    }

private:
    int fd_;
    std::atomic<bool> entered_{false};
};

/// A real SIGSEGV (SEGV_ACCERR): a store to a page the process may not write.
void fault() {
    g_fault_page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *static_cast<volatile int*>(g_fault_page) = 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s case log marker\n", argv[0]);
        return 2;
    }
    const std::string_view how = argv[1];
    g_log_path = argv[2];
    g_marker = ::open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (g_marker < 0) return 3;
    const rlimit no_core{0, 0};  // the parent checks the signal, not a core file
    ::setrlimit(RLIMIT_CORE, &no_core);

    const bool by_default = how.starts_with("default_");
    const int crash_signal = how.starts_with("default_segv") ? SIGSEGV : SIGABRT;
    if (by_default) {
        struct sigaction action {};
        action.sa_handler = &on_application_crash;
        sigemptyset(&action.sa_mask);
        ::sigaction(crash_signal, &action, nullptr);
    }
    fieldlog::Config config;
    config.level = fieldlog::Level::info;
    config.async = fieldlog::AsyncConfig{.enabled = !how.ends_with("_sync")};
    config.crash_handlers = by_default;
    config.sinks = {fieldlog::SinkConfig{
        .target = fieldlog::FileSinkOptions{.path = g_log_path, .flush_interval = std::chrono::hours(1)}}};
    const bool redacting = how == "abort_redact";
    if (redacting) config.redact = {"*SECRET*"};
    const bool filtered = how == "abort_filtered";
    if (filtered) {  // filter bits past the first word, on the crash path too
        config.sinks[0].exclude = {"other"};
        for (int i = 0; i < 70; ++i) {
            config.sinks.insert(config.sinks.begin(), fieldlog::SinkConfig{.target = std::make_shared<fieldlog::NullSink>(),
                                                                           .loggers = {"x." + std::to_string(i)}});
        }
    }
    const bool stuck = how == "abort_writer_stuck";
    auto stuck_sink = std::make_shared<StuckSink>(g_log_path);
    if (stuck) config.sinks = {fieldlog::SinkConfig{.target = stuck_sink}};
    fieldlog::configure(config);
    if (by_default) {
        install_reporter(crash_signal);
        const fieldlog::Logger log = fieldlog::get("child");
        log_records(log, 0);
        if (crash_signal == SIGSEGV) fault();
        std::abort();
    }

    const bool opted_out = how == "sigterm_opted_out" || how == "abort_opted_out";
    if (how == "abort" || redacting || filtered || stuck) {
        struct sigaction action {};
        action.sa_handler = &on_abort;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGABRT, &action, nullptr);
    } else if (how == "segv") {
        install_before_fieldlog(SIGSEGV, &on_segv);
    } else if (how == "sigterm" || opted_out) {
        install_before_fieldlog(SIGTERM, &on_terminate);
    } else {
        return 2;
    }
    if (opted_out) {
        fieldlog::install_signal_handlers({.terminate = false});
    } else {
        // Two calls, the second taking more groups: neither may record our handler as the
        // application's (the crash would then loop back into ours and never reach its handler).
        fieldlog::install_signal_handlers({.terminate = false, .reload = false});
        fieldlog::install_signal_handlers();
    }
    if (how == "sigterm" || opted_out) report_sigterm_action();

    if (stuck) {
        fieldlog::get("child").info("the writer's last");
        stuck_sink->wait_until_entered();
        // Context only the writer would encode: its records' lines carry it all the same.
        const fieldlog::Logger bound = fieldlog::get("child").with({{"svc", "a"}, {"n", -1}});
        const fieldlog::Scope scope{{"request_id", "r-1"}};
        log_records(bound, 0);
        std::abort();
    }
    const fieldlog::Logger log = fieldlog::get("child");
    if (filtered) fieldlog::get("other").info("to no sink");
    log_records(log, 0, redacting);
    if (filtered) fieldlog::get("other").info("to no sink either");
    if (how == "abort" || how == "abort_opted_out" || redacting || filtered) std::abort();
    if (how == "segv") fault();

    ::kill(::getpid(), SIGTERM);
    for (int waited = 0; g_terminate_handled == 0; ++waited) {
        if (waited == 10'000) return 5;  // 10 s: the application's handler never ran
        timespec t{0, 1'000'000};
        ::nanosleep(&t, nullptr);
    }
    log_records(log, kRecords);  // logging goes on: the flush did not halt it
    return 0;
}
