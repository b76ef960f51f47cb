// SPDX-License-Identifier: MIT
// The signal side of the library, by group: install_signal_handlers() takes the groups it is
// given; configure() takes the crash group, and the terminate signals still at their default
// action, unless Config::crash_handlers is off (install_crash_handlers below).
//   reload:    SIGHUP                     → reload() (reopen_files() without a config file)
//   terminate: SIGTERM, SIGINT            → every sink ends, then the signal again with its default action
//   crash:     SIGSEGV, SIGABRT, SIGBUS,  → the crash path: write what was accepted and one
//              SIGFPE, SIGILL               `fatal` record, then the signal again
// Chaining: each signal keeps the action it had before ours, and that action gets the signal
// after our work. Crash: it is restored (SIG_IGN as SIG_DFL) and the signal delivered again (a
// CPU fault by re-executing the instruction), so the kernel applies its own flags. Terminate and
// reload: a handler from before is called from ours, its flags emulated; a terminate signal the
// application handles (or ignores) gets a flush that leaves logging open, waited for, bounded.
// Handlers only set flags, post a semaphore, or (crash path) do async-signal-safe work; reload
// and flush run on a helper thread. Both final paths (control/crash.hpp) end holding every
// sink's mutex (logging calls then never return) and are bounded by alarm(3): when it fires,
// the process ends with the original signal anyway.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

#include "base/signal_stack.hpp"
#include "base/thread_id.hpp"
#include "control/crash.hpp"
#include "control/crash_stack.hpp"
#include "control/state.hpp"

namespace fieldlog {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
constexpr int kTerminateSignals[] = {SIGTERM, SIGINT};
constexpr unsigned kFinalBoundSeconds = 3;
constexpr std::int64_t kLiveFlushWaitNanoseconds = 3'000'000'000;  // a handler's wait for a flush that lets logging go on

std::mutex g_install_mutex;
sem_t g_requests;                          // posted by handlers, waited on by the helper thread
std::atomic<pid_t> g_helper_process{0};    // the process the helper thread runs in (not a forked child)
std::atomic<bool> g_reload_requested{false};
std::atomic<int> g_terminate_requested{0};  // the signal, once SIGTERM/SIGINT arrived
std::atomic<int> g_final_owner{0};          // kernel id of the thread running a final path
std::atomic<int> g_final_signal{0};         // what the alarm re-raises
detail::FinalNote g_note;                   // what the `fatal` record says
std::atomic<std::uint32_t> g_flush_requests{0};  // by terminate handlers whose process lives on
std::atomic<std::uint32_t> g_flushes_done{0};    // the request count the helper's last flush began at

// Per signal number, under g_install_mutex: whether we took it, and the action it had before,
// which our handler passes the signal on to. Written before our sigaction() installs the
// handler that reads it, never after.
bool g_taken[NSIG];
struct sigaction g_previous[NSIG];
struct sigaction g_alarm_previous;  // SIGALRM's action before the final alarm took it

/// True when `action` runs a function (it is neither SIG_DFL nor SIG_IGN).
bool is_handler(const struct sigaction& action) noexcept {
    return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

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
    ::sigaction(SIGALRM, &action, &g_alarm_previous);
    unblock(SIGALRM);
    ::alarm(kFinalBoundSeconds);
}

/// The bound covers our own flush only: a handler from before ours takes the time it takes.
void disarm_final_alarm() noexcept {
    ::alarm(0);
    ::sigaction(SIGALRM, &g_alarm_previous, nullptr);
}

/// Hands a crash signal, after the final flush, to the action from before ours, restored so
/// that the kernel delivers it with that action's own flags, mask and stack. A fault cannot be
/// ignored: SIG_IGN becomes SIG_DFL. A fault raised by the CPU needs no raise: returning
/// re-executes the instruction. Any other signal is raised and stays pending (this handler
/// blocks it) until we return.
void pass_crash_on(int signo, bool fault) noexcept {
    struct sigaction previous = g_previous[signo];
    if (is_handler(previous)) {
        disarm_final_alarm();
    } else {
        previous = {};
        previous.sa_handler = SIG_DFL;
        sigemptyset(&previous.sa_mask);
    }
    ::sigaction(signo, &previous, nullptr);
    if (!fault) ::raise(signo);
}

/// Calls the handler from before ours, if there was one, as the kernel would have: SA_RESETHAND
/// restores SIG_DFL first; its sa_mask, and the signal itself unless SA_NODEFER, are blocked
/// during the call; SA_SIGINFO chooses the three-argument form.
void call_previous(int signo, siginfo_t* info, void* context) noexcept {
    const struct sigaction& previous = g_previous[signo];
    if (!is_handler(previous)) return;
    if ((previous.sa_flags & SA_RESETHAND) != 0) set_default_action(signo);
    sigset_t ours;
    sigset_t during;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &ours);
    sigorset(&during, &ours, &previous.sa_mask);
    if ((previous.sa_flags & SA_NODEFER) != 0) {
        sigdelset(&during, signo);
    } else {
        sigaddset(&during, signo);
    }
    ::pthread_sigmask(SIG_SETMASK, &during, nullptr);
    if ((previous.sa_flags & SA_SIGINFO) != 0) {
        previous.sa_sigaction(signo, info, context);
    } else {
        previous.sa_handler(signo);
    }
    ::pthread_sigmask(SIG_SETMASK, &ours, nullptr);
}

std::int64_t monotonic_nanoseconds() noexcept {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

/// Asks the helper thread for a flush() that leaves logging open (the process lives on), and
/// waits until one that began after the request is done. Bounded: the thread this signal
/// interrupted may hold a lock that flush needs.
void flush_on_helper() noexcept {
    const std::uint32_t ticket = g_flush_requests.fetch_add(1) + 1;
    ::sem_post(&g_requests);
    const std::int64_t deadline = monotonic_nanoseconds() + kLiveFlushWaitNanoseconds;
    // Modular: the counters may wrap.
    while (static_cast<std::int32_t>(g_flushes_done.load(std::memory_order_acquire) - ticket) < 0 &&
           monotonic_nanoseconds() < deadline) {
        timespec t{0, 1'000'000};
        ::nanosleep(&t, nullptr);
    }
}

enum class Claim : std::uint8_t { mine, already_mine, another_thread };

/// Only one final path runs; the first thread to get here owns it.
Claim claim_final() noexcept {
    const int self = detail::kernel_thread_id();
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
                               .thread_id = detail::kernel_thread_id(),
                               .time = {}};
    detail::note_crash_stack(g_note);
    detail::write_final_records(g_note, true);
    // With SIG_DFL from before, the default action ends the process once we return: the exit
    // status and core dump are the original's.
    pass_crash_on(signo, g_note.fault);
    errno = saved_errno;
}

void on_terminate_signal(int signo, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    const bool helper_here = g_helper_process.load() == ::getpid();
    if (g_previous[signo].sa_handler != SIG_DFL) {  // the application's handler, or SIG_IGN: it lives on
        // A forked child that did not call install_signal_handlers() again has no helper, and a
        // flush from a handler is safe only behind the halt: that child gets none.
        if (helper_here) flush_on_helper();
    } else if (helper_here) {
        int none = 0;
        if (g_terminate_requested.compare_exchange_strong(none, signo)) ::sem_post(&g_requests);
    } else if (claim_final() == Claim::mine) {  // a forked child has no helper: flush from here
        arm_final_alarm(signo);
        g_note = detail::FinalNote{.signo = signo, .thread_id = detail::kernel_thread_id()};
        detail::write_final_records(g_note, false);
        set_default_action(signo);
        ::raise(signo);
    }
    errno = saved_errno;
    call_previous(signo, info, context);
}

void on_hangup(int signo, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    if (g_helper_process.load() == ::getpid()) {
        g_reload_requested.store(true);
        ::sem_post(&g_requests);
    }
    errno = saved_errno;
    call_previous(signo, info, context);
}

void terminate_on(int signo) noexcept {
    if (claim_final() != Claim::mine) detail::park_until_exit();  // a crash path runs: it ends us
    arm_final_alarm(signo);
    detail::flush_and_hold(kFinalBoundSeconds);
    die_by(signo);
}

/// The flush a terminate handler waits for when the process lives on: logging stays open.
void flush_for_handlers() noexcept {
    const std::uint32_t requested = g_flush_requests.load();
    if (requested == g_flushes_done.load(std::memory_order_relaxed)) return;
    try {
        flush();
    } catch (...) {  // the waiting handler goes on either way
    }
    g_flushes_done.store(requested, std::memory_order_release);
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
    detail::name_this_thread("fieldlog-signal");
    for (;;) {
        while (::sem_wait(&g_requests) != 0) {  // EINTR
        }
        if (const int signo = g_terminate_requested.load()) terminate_on(signo);
        flush_for_handlers();
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

/// Installs `handler` for `signo`, keeping the action from before for it to pass the signal on
/// to. A signal taken already is left alone: its action is ours, or one installed after ours
/// that may chain to ours; neither may become "the previous one". With `only_if_default`, a
/// signal the application handles or ignores is left to it, untaken.
void take(int signo, void (*handler)(int, siginfo_t*, void*), int restart_without_previous,
          bool only_if_default = false) {
    if (g_taken[signo]) return;
    struct sigaction& previous = g_previous[signo];
    ::sigaction(signo, nullptr, &previous);
    if (only_if_default && previous.sa_handler != SIG_DFL) return;
    struct sigaction action {};
    action.sa_sigaction = handler;
    sigemptyset(&action.sa_mask);
    // Interrupted system calls restart, or not, as the application's own handler chose.
    const int restart = is_handler(previous) ? previous.sa_flags & SA_RESTART : restart_without_previous;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | restart;
    ::sigaction(signo, &action, nullptr);
    g_taken[signo] = true;
}

}  // namespace

void install_signal_handlers(SignalOptions options) {
    const std::lock_guard lock(g_install_mutex);
    const bool helper_needed = options.terminate || options.reload;
    if (helper_needed && g_helper_process.load() != ::getpid()) start_helper();  // first, or first in a forked child
    detail::final_record_logger();  // made now: the handlers may not allocate
    if (options.crash) {
        detail::prepare_crash_stack();
        for (const int signo : kFatalSignals) take(signo, &on_fatal_signal, 0);
    }
    if (options.terminate) {
        for (const int signo : kTerminateSignals) take(signo, &on_terminate_signal, SA_RESTART);
    }
    if (options.reload) take(SIGHUP, &on_hangup, SA_RESTART);
    detail::give_thread_a_signal_stack();
}

namespace detail {

void install_crash_handlers() {
    const std::lock_guard lock(g_install_mutex);
    final_record_logger();  // made now: the handlers may not allocate
    prepare_crash_stack();
    for (const int signo : kFatalSignals) take(signo, &on_fatal_signal, 0);
    // Without a helper thread their handler flushes in place (as in a forked child), then the
    // default action ends the process as it would have.
    for (const int signo : kTerminateSignals) take(signo, &on_terminate_signal, SA_RESTART, true);
}

}  // namespace detail

}  // namespace fieldlog
