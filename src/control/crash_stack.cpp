// SPDX-License-Identifier: MIT
// The crashing thread's stack (crash_stack.hpp). What the handler calls, and why each is safe
// there: _Unwind_Backtrace reads .eh_frame tables and finds them through _dl_find_object (libgcc
// 12 and later on glibc 2.35 and later), which takes no lock and allocates nothing; its
// one-time set-up is done by prepare_crash_stack(). _dl_find_object places each address in its
// module. A module's exported symbols (.dynsym, what dladdr reads, but without the loader lock
// dladdr takes) are in its mapped memory. Names stay mangled: the demangler allocates.
#include "control/crash_stack.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <unistd.h>
#include <unwind.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <string_view>
#include <typeinfo>

#include "base/thread_id.hpp"
#include "control/crash.hpp"

namespace fieldlog::detail {
namespace {

/// Frames walked to find where the signal struck: the handler's own, and a crash reporter's
/// that chains to ours, come first.
constexpr std::size_t kWalkLimit = 128;
constexpr std::size_t kMaxWhatSize = 512;

struct RawFrame {
    std::uintptr_t ip = 0;
    bool at_instruction = false;  ///< where the signal struck, not a return address
};

/// The walk's own storage: only one final path runs.
struct Walk {
    RawFrame raw[kWalkLimit];
    std::size_t count = 0;
    std::size_t first = 0;  ///< where the signal struck, once found
    bool found = false;
};
Walk g_walk;
CrashFrame g_frames[kMaxCrashFrames];

char g_executable[PATH_MAX];
std::size_t g_executable_size = 0;
bool g_prepared = false;

// A stack the crash corrupted can lead the unwinder to read memory that is not there: the walk
// catches that fault and keeps the frames it found before.
constexpr int kWalkFaults[] = {SIGSEGV, SIGBUS};
sigjmp_buf g_walk_escape;
std::atomic<int> g_walker{0};  // kernel id of the thread walking its stack
struct sigaction g_walk_saved[std::size(kWalkFaults)];

std::terminate_handler g_previous_terminate = nullptr;
std::atomic<int> g_terminating_thread{0};  // kernel id of the thread that noted an exception
char g_exception_type[kMaxCrashNameSize];
std::size_t g_exception_type_size = 0;
char g_exception_what[kMaxWhatSize];
std::size_t g_exception_what_size = 0;

std::size_t copy_capped(char* out, std::size_t room, const char* text) noexcept {
    const std::size_t size = ::strnlen(text, room);
    std::memcpy(out, text, size);
    return size;
}

/// Notes the uncaught exception (its type demangled, its what()), then lets the handler from
/// before ours end the program. Not a signal handler: the heap is usable, as in libstdc++'s own.
[[noreturn]] void note_uncaught_exception() noexcept {
    if (const std::type_info* type = abi::__cxa_current_exception_type()) {
        int status = 0;
        char* demangled = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
        g_exception_type_size =
            copy_capped(g_exception_type, sizeof g_exception_type, status == 0 && demangled != nullptr ? demangled : type->name());
        std::free(demangled);
        try {
            throw;
        } catch (const std::exception& e) {
            g_exception_what_size = copy_capped(g_exception_what, sizeof g_exception_what, e.what());
        } catch (...) {  // not a std::exception: no what()
        }
        g_terminating_thread.store(kernel_thread_id(), std::memory_order_release);
    }
    (g_previous_terminate != nullptr ? g_previous_terminate : &std::abort)();
    std::abort();  // a handler must not return
}

/// The unwinder the walk calls. libgcc's, from libgcc_s when the process has loaded it: LLVM's
/// libunwind (which a libc++ program may find first) stops at the signal frame on x86-64.
struct Unwinder {
    decltype(&_Unwind_Backtrace) backtrace = &_Unwind_Backtrace;
    decltype(&_Unwind_GetIPInfo) ip_info = &_Unwind_GetIPInfo;
};
Unwinder g_unwinder;

Unwinder libgcc_unwinder() noexcept {
    void* libgcc = ::dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (libgcc == nullptr) return {};
    void* backtrace = ::dlsym(libgcc, "_Unwind_Backtrace");
    void* ip_info = ::dlsym(libgcc, "_Unwind_GetIPInfo");
    if (backtrace == nullptr || ip_info == nullptr) return {};
    return {reinterpret_cast<decltype(&_Unwind_Backtrace)>(backtrace),
            reinterpret_cast<decltype(&_Unwind_GetIPInfo)>(ip_info)};
}

_Unwind_Reason_Code collect(_Unwind_Context* context, void* argument) {
    auto& walk = *static_cast<Walk*>(argument);
    int before_instruction = 0;
    const std::uintptr_t ip = g_unwinder.ip_info(context, &before_instruction);
    if (ip == 0) return _URC_END_OF_STACK;
    // The unwinder marks the frame a signal interrupted: its address is the instruction itself.
    if (!walk.found && before_instruction != 0) {
        walk.found = true;
        walk.first = walk.count;
    }
    walk.raw[walk.count++] = RawFrame{ip, before_instruction != 0};
    // One frame past the cap tells that frames were cut.
    const std::size_t limit = walk.found && walk.first + kMaxCrashFrames + 1 < kWalkLimit ? walk.first + kMaxCrashFrames + 1
                                                                                           : kWalkLimit;
    return walk.count < limit ? _URC_NO_REASON : _URC_END_OF_STACK;
}

_Unwind_Reason_Code ignore(_Unwind_Context*, void*) { return _URC_NO_REASON; }

void on_walk_fault(int) {
    if (g_walker.load() == kernel_thread_id()) siglongjmp(g_walk_escape, 1);
    park_until_exit();  // another thread's fault: the crash path on the walking thread ends the process
}

/// Runs the unwinder with a fault during the walk caught (the process's crash signals are
/// blocked in this handler, so a fault would otherwise kill it before any record is written).
void walk_guarded() noexcept {
    struct sigaction guard {};
    guard.sa_handler = &on_walk_fault;
    sigemptyset(&guard.sa_mask);
    guard.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigset_t faults;
    sigemptyset(&faults);
    for (std::size_t i = 0; i < std::size(kWalkFaults); ++i) {
        ::sigaction(kWalkFaults[i], &guard, &g_walk_saved[i]);
        sigaddset(&faults, kWalkFaults[i]);
    }
    sigset_t before;
    ::pthread_sigmask(SIG_UNBLOCK, &faults, &before);
    g_walker.store(kernel_thread_id());
    if (sigsetjmp(g_walk_escape, 1) == 0) g_unwinder.backtrace(&collect, &g_walk);
    g_walker.store(0);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    for (std::size_t i = 0; i < std::size(kWalkFaults); ++i) ::sigaction(kWalkFaults[i], &g_walk_saved[i], nullptr);
}

/// A pointer of the module's dynamic section: the loader relocates them in place on most
/// systems, not where that section is read-only.
std::uintptr_t in_memory(const link_map& module, ElfW(Addr) pointer) noexcept {
    return pointer < module.l_addr ? pointer + module.l_addr : pointer;
}

/// How many symbols a GNU hash table covers: past the highest bucket's chain end.
std::size_t gnu_hash_symbols(const std::uint32_t* table) noexcept {
    const std::uint32_t buckets = table[0];
    const std::uint32_t first = table[1];
    const std::uint32_t bloom_words = table[2];
    const std::uint32_t* bucket = table + 4 + bloom_words * (sizeof(ElfW(Addr)) / sizeof(std::uint32_t));
    const std::uint32_t* chain = bucket + buckets;
    std::uint32_t last = 0;
    for (std::uint32_t b = 0; b < buckets; ++b) last = bucket[b] > last ? bucket[b] : last;
    if (last < first) return first;
    while ((chain[last - first] & 1U) == 0) ++last;
    return last + 1;
}

/// The exported function of `module` whose code holds `offset`, from the dynamic symbol table
/// in memory; empty when none does (a static function, or an executable linked without
/// -rdynamic).
std::string_view exported_function(const link_map& module, std::uintptr_t offset) noexcept {
    const ElfW(Sym)* symbols = nullptr;
    const char* strings = nullptr;
    std::size_t strings_size = 0;
    std::size_t count = 0;
    for (const ElfW(Dyn)* entry = module.l_ld; entry != nullptr && entry->d_tag != DT_NULL; ++entry) {
        switch (entry->d_tag) {
            case DT_SYMTAB: symbols = reinterpret_cast<const ElfW(Sym)*>(in_memory(module, entry->d_un.d_ptr)); break;
            case DT_STRTAB: strings = reinterpret_cast<const char*>(in_memory(module, entry->d_un.d_ptr)); break;
            case DT_STRSZ: strings_size = entry->d_un.d_val; break;
            case DT_HASH: count = reinterpret_cast<const std::uint32_t*>(in_memory(module, entry->d_un.d_ptr))[1]; break;
            case DT_GNU_HASH:
                count = gnu_hash_symbols(reinterpret_cast<const std::uint32_t*>(in_memory(module, entry->d_un.d_ptr)));
                break;
            default: break;
        }
    }
    if (symbols == nullptr || strings == nullptr) return {};
    for (std::size_t i = 0; i < count; ++i) {
        const ElfW(Sym)& symbol = symbols[i];
        const unsigned type = ELF64_ST_TYPE(symbol.st_info);  // the same in ELF32
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || symbol.st_shndx == SHN_UNDEF) continue;
        if (offset < symbol.st_value || offset - symbol.st_value >= symbol.st_size) continue;
        if (symbol.st_name >= strings_size) return {};
        const char* name = strings + symbol.st_name;
        const std::size_t room = strings_size - symbol.st_name;
        return {name, ::strnlen(name, room < kMaxCrashNameSize ? room : kMaxCrashNameSize)};
    }
    return {};
}

/// The module that holds `ip`, the offset in it, and the function's name where it is exported.
CrashFrame place(const RawFrame& raw) noexcept {
    CrashFrame frame{.address = raw.ip};
    // A return address may be one past the function's end (a call that does not return).
    const std::uintptr_t code = raw.at_instruction ? raw.ip : raw.ip - 1;
    dl_find_object found{};
    if (_dl_find_object(reinterpret_cast<void*>(code), &found) != 0 || found.dlfo_link_map == nullptr) return frame;
    const link_map& module = *found.dlfo_link_map;
    const char* path = module.l_name;
    if (path != nullptr && path[0] != '\0') {
        frame.module = {path, ::strnlen(path, kMaxCrashNameSize)};
    } else {  // the main program's name is empty in the loader's list
        frame.module = {g_executable, g_executable_size};
    }
    frame.offset = raw.ip - module.l_addr;
    frame.function = exported_function(module, code - module.l_addr);
    return frame;
}

}  // namespace

void prepare_crash_stack() {
    if (g_prepared) return;
    g_prepared = true;
    const ssize_t size = ::readlink("/proc/self/exe", g_executable, sizeof g_executable);
    if (size > 0 && static_cast<std::size_t>(size) < sizeof g_executable) {
        g_executable_size = static_cast<std::size_t>(size) < kMaxCrashNameSize ? static_cast<std::size_t>(size) : kMaxCrashNameSize;
    } else {
        g_executable_size = copy_capped(g_executable, kMaxCrashNameSize, program_invocation_name);
    }
    g_unwinder = libgcc_unwinder();
    g_unwinder.backtrace(&ignore, nullptr);  // the unwinder's one-time set-up, here and not in a handler
    if (std::get_terminate() != &note_uncaught_exception) g_previous_terminate = std::set_terminate(&note_uncaught_exception);
}

void note_crash_stack(FinalNote& note) noexcept {
    g_walk.count = 0;
    g_walk.found = false;
    walk_guarded();
    const std::size_t first = g_walk.found ? g_walk.first : 0;
    std::size_t count = g_walk.count - first;
    note.frames_cut = count > kMaxCrashFrames || g_walk.count == kWalkLimit;
    count = count < kMaxCrashFrames ? count : kMaxCrashFrames;
    for (std::size_t i = 0; i < count; ++i) g_frames[i] = place(g_walk.raw[first + i]);
    note.frames = {g_frames, count};
    if (g_terminating_thread.load(std::memory_order_acquire) == note.thread_id && note.thread_id != 0) {
        note.exception_type = {g_exception_type, g_exception_type_size};
        note.exception_what = {g_exception_what, g_exception_what_size};
    }
}

}  // namespace fieldlog::detail
