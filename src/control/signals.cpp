// install_signal_handlers(): the opt-in signal side of the library, by group.
//   reload:    SIGHUP                     → reload() (reopen_files() without a config file)
//   terminate: SIGTERM, SIGINT            → flush(), then the signal again with its default action
//   crash:     SIGSEGV, SIGABRT, SIGBUS,  → the crash path: write what was accepted and one
//              SIGFPE, SIGILL               `fatal` record, then the signal again
// Handlers only set flags, post a semaphore, or (crash path) do async-signal-safe work; reload
// and flush run on a helper thread. Both final paths (control/crash.hpp) end holding every
// sink's mutex (logging calls then never return) and are bounded by alarm(3): when it fires,
// the process ends with the original signal anyway.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

#include "base/signal_stack.hpp"
#include "control/crash.hpp"
#include "control/state.hpp"

namespace fieldlog {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
constexpr int kTerminateSignals[] = {SIGTERM, SIGINT};
constexpr unsigned kFinalBoundSeconds = 3;

std::mutex g_install_mutex;
sem_t g_requests;                          // posted by handlers, waited on by the helper thread
std::atomic<pid_t> g_helper_process{0};    // the process the helper thread runs in (not a forked child)
std::atomic<bool> g_reload_requested{false};
std::atomic<int> g_terminate_requested{0};  // the signal, once SIGTERM/SIGINT arrived
std::atomic<int> g_final_owner{0};          // kernel id of the thread running a final path
std::atomic<int> g_final_signal{0};         // what the alarm re-raises
detail::FinalNote g_note;                   // what the `fatal` record says

int current_tid() noexcept { return static_cast<int>(::syscall(SYS_gettid)); }

void set_default_action(int signo) noexcept {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    ::sigaction(signo, &action, nullptr);
}

void unblock(int signo) noexcept {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

/// Ends the process by `signo` with its default action, from any thread.
[[noreturn]] void die_by(int signo) noexcept {
    set_default_action(signo);
    unblock(signo);
    ::raise(signo);
    ::_exit(128 + signo);  // only if the default action did not end us
}

void on_alarm(int) { die_by(g_final_signal.load()); }

/// Bounds the final path: when the alarm fires, the process dies by `signo` as it would have.
void arm_final_alarm(int signo) noexcept {
    g_final_signal.store(signo);
    struct sigaction action {};
    action.sa_handler = &on_alarm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_ONSTACK;
    ::sigaction(SIGALRM, &action, nullptr);
    unblock(SIGALRM);
    ::alarm(kFinalBoundSeconds);
}

enum class Claim : std::uint8_t { mine, already_mine, another_thread };

/// Only one final path runs; the first thread to get here owns it.
Claim claim_final() noexcept {
    const int self = current_tid();
    int owner = 0;
    if (g_final_owner.compare_exchange_strong(owner, self)) return Claim::mine;
    return owner == self ? Claim::already_mine : Claim::another_thread;
}

/// The crash path. Runs on the faulting thread, on its alternate stack.
void on_fatal_signal(int signo, siginfo_t* info, void*) {
    const int saved_errno = errno;
    switch (claim_final()) {
        case Claim::mine: break;
        case Claim::already_mine: die_by(signo);  // a fault inside the final path itself
        case Claim::another_thread: detail::park_until_exit();  // that thread ends the process
    }
    arm_final_alarm(signo);
    g_note = detail::FinalNote{.signo = signo,
                               .code = info != nullptr ? info->si_code : 0,
                               .address = info != nullptr ? info->si_addr : nullptr,
                               .fault = signo != SIGABRT && info != nullptr && info->si_code > 0,
                               .thread_id = current_tid(),
                               .time = {}};
    detail::write_final_records(g_note, true);
    // The signal stays blocked until this handler returns; then the raised copy ends the
    // process with the default action: the exit status and core dump are the original's.
    set_default_action(signo);
    ::raise(signo);
    errno = saved_errno;
}

void on_terminate_signal(int signo, siginfo_t*, void*) {
    const int saved_errno = errno;
    if (g_helper_process.load() == ::getpid()) {
        int none = 0;
        if (g_terminate_requested.compare_exchange_strong(none, signo)) ::sem_post(&g_requests);
    } else if (claim_final() == Claim::mine) {  // a forked child has no helper: flush from here
        arm_final_alarm(signo);
        g_note = detail::FinalNote{.signo = signo, .thread_id = current_tid()};
        detail::write_final_records(g_note, false);
        set_default_action(signo);
        ::raise(signo);
    }
    errno = saved_errno;
}

void on_hangup(int, siginfo_t*, void*) {
    const int saved_errno = errno;
    if (g_helper_process.load() == ::getpid()) {
        g_reload_requested.store(true);
        ::sem_post(&g_requests);
    }
    errno = saved_errno;
}

void terminate_on(int signo) noexcept {
    if (claim_final() != Claim::mine) detail::park_until_exit();  // a crash path runs: it ends us
    arm_final_alarm(signo);
    detail::flush_and_hold();
    die_by(signo);
}

void reload_or_reopen() noexcept {
    try {
        std::string path;
        {
            detail::State& s = detail::state();
            const std::lock_guard lock(s.configure_mutex);
            path = s.config_path;
        }
        if (path.empty()) {
            reopen_files();
        } else {
            reload();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fieldlog: SIGHUP: %s\n", e.what());
    }
}

void* helper_main(void*) {
    for (;;) {
        while (::sem_wait(&g_requests) != 0) {  // EINTR
        }
        if (const int signo = g_terminate_requested.load()) terminate_on(signo);
        if (g_reload_requested.exchange(false)) reload_or_reopen();
    }
}

void start_helper() {
    ::sem_init(&g_requests, 0, 0);
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &previous);  // the helper takes no signal itself
    pthread_t helper{};
    const int error = ::pthread_create(&helper, nullptr, &helper_main, nullptr);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (error != 0) {
        std::fprintf(stderr, "fieldlog: cannot start the signal helper thread (%d); SIGHUP is ignored and "
                             "SIGTERM/SIGINT flush from the handler\n", error);
        return;
    }
    ::pthread_detach(helper);
    g_helper_process.store(::getpid());
}

void install(int signo, void (*handler)(int, siginfo_t*, void*), int extra_flags) {
    struct sigaction action {};
    action.sa_sigaction = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | extra_flags;
    ::sigaction(signo, &action, nullptr);
}

}  // namespace

void install_signal_handlers(SignalOptions options) {
    const std::lock_guard lock(g_install_mutex);
    const bool helper_needed = options.terminate || options.reload;
    if (helper_needed && g_helper_process.load() != ::getpid()) start_helper();  // first, or first in a forked child
    detail::final_record_logger();  // made now: the handlers may not allocate
    if (options.crash) {
        for (const int signo : kFatalSignals) install(signo, &on_fatal_signal, 0);
    }
    if (options.terminate) {
        for (const int signo : kTerminateSignals) install(signo, &on_terminate_signal, SA_RESTART);
    }
    if (options.reload) install(SIGHUP, &on_hangup, SA_RESTART);
    detail::give_thread_a_signal_stack();
}

}  // namespace fieldlog
