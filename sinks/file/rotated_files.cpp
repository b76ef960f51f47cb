// SPDX-License-Identifier: MIT
// Rotated files and the retention worker (see rotated_files.hpp). The worker is one thread and
// one mutex for every sink that needs it: the mutex guards the file names (a sink's shift and
// the worker's renames and deletions take it), and is let go while a file is compressed. The
// file is first renamed to a hidden name of its slot, which shifts move along with it, so a
// reader that globs `path*` sees each file once, plain or whole .gz, at every moment. Normal
// exit stops the worker between steps; a crash leaves hidden names the next start puts back.
// Cold path, off the caller's thread but for shift().
#include "rotated_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if FIELDLOG_WITH_GZIP
#include <zlib.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "base/error_reporter.hpp"
#include "base/fork_hooks.hpp"
#include "base/thread_id.hpp"

namespace fieldlog::detail {

using SystemClock = std::chrono::system_clock;

constexpr std::size_t kNone = SIZE_MAX;

struct RotatedSet {
    std::string path;
    std::vector<std::string> plain;  ///< path.1 … path.keep
    std::vector<std::string> gz;     ///< path.1.gz … path.keep.gz
    std::vector<std::string> hidden;  ///< dir/.name.1.compressing …: a file being compressed
    std::string temp;                ///< dir/.name.gz.tmp: a compression not yet whole
    std::string old_temp;            ///< path.gz.tmp, the temporary of earlier versions
    std::string hidden_prefix;       ///< ".name." as in hidden (without the directory)
    std::string directory;           ///< synced after a rename, so the rename survives a power cut
    FileCompression compress;
    int level;
    std::chrono::seconds max_age;
    std::uint64_t max_total_bytes;
    std::function<void()> count_error;
    ErrorReporter errors;
    bool on_worker = false;            ///< set once, before the worker sees this set
    std::atomic<bool> leaving{false};  ///< the sink goes: stop compressing (read between blocks)

    // Under the worker's mutex.
    bool pending = true;       ///< look at the files (at start, after each shift)
    std::size_t hidden_at = kNone;  ///< the slot of the file under its hidden name (kNone: none)
    SystemClock::time_point next_expiry = SystemClock::time_point::max();  ///< when max_age drops the next file

    void report(const char* operation, int error) noexcept {
        count_error();
        errors.report("file", path, operation, error);
    }
};

namespace {

constexpr std::size_t kBlock = 64 * 1024;

struct Worker {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<RotatedSet*> sets;
    RotatedSet* busy = nullptr;  ///< the set being looked at (also while its mutex is let go)
    std::thread* thread = nullptr;      ///< owned; abandoned (never joined) in a forked child
    std::uint64_t generation = 0;       ///< a thread runs while this equals the value it started with
    bool fork_handlers_installed = false;
    bool exit_handler_installed = false;
    std::atomic<bool> exiting{false};   ///< normal exit: start nothing new, stop a compression
    std::unique_ptr<unsigned char[]> in;   ///< kBlock each, allocated with the first thread
    std::unique_ptr<unsigned char[]> out;
};

/// Never destroyed: sinks may be closed from atexit handlers and static destructors.
Worker& worker() {
    static auto* instance = new Worker;
    return *instance;
}

/// Compression of `set` must stop at its next block: the sink leaves or the process exits.
bool cancelled(const RotatedSet& set) noexcept {
    return set.leaving.load(std::memory_order_relaxed) || worker().exiting.load(std::memory_order_relaxed);
}

bool exists(const std::string& name) noexcept {
    struct stat st {};
    return ::lstat(name.c_str(), &st) == 0;
}

void sync_directory(RotatedSet& set) noexcept {
    const int fd = ::open(set.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

/// Deflates all of `source` into `target` as one gzip member. Returns 0, ECANCELED when the
/// sink is leaving, or the errno (EIO for a zlib failure) of what went wrong, and `operation`.
int deflate_file(RotatedSet& set, int source, int target, const char*& operation) noexcept {
#if FIELDLOG_WITH_GZIP
    Worker& w = worker();
    z_stream stream{};
    operation = "compress";
    if (deflateInit2(&stream, set.level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return ENOMEM;
    int error = 0;
    int flush = Z_NO_FLUSH;
    while (error == 0 && flush != Z_FINISH) {
        if (cancelled(set)) {
            error = ECANCELED;
            break;
        }
        const ssize_t got = ::read(source, w.in.get(), kBlock);
        if (got < 0) {
            if (errno == EINTR) continue;
            error = errno;
            operation = "compress (read)";
            break;
        }
        flush = got == 0 ? Z_FINISH : Z_NO_FLUSH;
        stream.next_in = w.in.get();
        stream.avail_in = static_cast<uInt>(got);
        do {
            stream.next_out = w.out.get();
            stream.avail_out = kBlock;
            if (deflate(&stream, flush) == Z_STREAM_ERROR) {
                error = EIO;
                break;
            }
            const std::size_t size = kBlock - stream.avail_out;
            for (std::size_t done = 0; done < size && error == 0;) {
                const ssize_t n = ::write(target, w.out.get() + done, size - done);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) {
                    error = n < 0 ? errno : EIO;
                    operation = "compress (write)";
                } else {
                    done += static_cast<std::size_t>(n);
                }
            }
        } while (error == 0 && stream.avail_out == 0);
    }
    deflateEnd(&stream);
    return error;
#else
    // Not reached: without zlib FileSink refuses compress = gzip when it is made (file_sink.cpp).
    (void)set, (void)source, (void)target;
    operation = "compress";
    return ENOTSUP;
#endif
}

/// Compresses rotated file `index` (0 for path.1) into path.N.gz, N being where it is by the
/// time it is done. Called and returns with `lock` held; lets it go while compressing. The
/// plain file waits under its hidden name, so that no reader sees it twice: the .gz appears
/// whole with one rename, or the plain file comes back with one.
void compress_one(RotatedSet& set, std::size_t index, std::unique_lock<std::mutex>& lock) noexcept {
    const int source = ::open(set.plain[index].c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (source < 0) {
        if (errno != ENOENT) set.report("compress (open)", errno);
        return;
    }
    struct stat before {};
    ::fstat(source, &before);
    if (::rename(set.plain[index].c_str(), set.hidden[index].c_str()) != 0) {
        set.report("compress (rename)", errno);
        ::close(source);
        return;
    }
    set.hidden_at = index;
    lock.unlock();

    const char* operation = "compress (create)";
    int error = 0;
    const mode_t mode = before.st_mode & 07777;
    const int target =
        ::open(set.temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (target < 0) {
        error = errno;
    } else {
        // The umask may have taken bits off: the .gz gets the plain file's mode exactly (where
        // fchmod fails, what open gave it: never more).
        (void)::fchmod(target, mode);
        error = deflate_file(set, source, target, operation);
        // The .gz keeps the plain file's times: max_age counts from the rotation.
        const timespec times[2] = {before.st_atim, before.st_mtim};
        if (error == 0) ::futimens(target, times);
        if (error == 0 && ::fsync(target) != 0) {
            error = errno;
            operation = "compress (fsync)";
        }
        ::close(target);
    }
    ::close(source);

    lock.lock();
    // Shifts moved the hidden file along with its slot; past keep it was deleted. The crash
    // path may have put it back (then it is not hidden any more either).
    const std::size_t now_at = set.hidden_at;
    set.hidden_at = kNone;
    struct stat current {};
    const bool still_there = now_at != kNone && ::lstat(set.hidden[now_at].c_str(), &current) == 0 &&
                             current.st_ino == before.st_ino && current.st_dev == before.st_dev;
    if (error == 0 && still_there && ::rename(set.temp.c_str(), set.gz[now_at].c_str()) != 0) {
        error = errno;
        operation = "compress (rename)";
    }
    if (error != 0 || !still_there) {
        ::unlink(set.temp.c_str());
        if (still_there) ::rename(set.hidden[now_at].c_str(), set.plain[now_at].c_str());
        if (error != 0 && error != ECANCELED) set.report(operation, error);
        return;
    }
    ::unlink(set.hidden[now_at].c_str());
    sync_directory(set);
}

/// Puts back what a process that died while compressing left: a hidden file goes back to its
/// plain name, or is deleted when its .gz is whole (renamed into place, then the process died).
/// Its slot is in its name, also a slot past today's keep. Temporaries are deleted.
void recover(RotatedSet& set) noexcept {
    ::unlink(set.temp.c_str());
    ::unlink(set.old_temp.c_str());
    // Both forms of one file: a crash of an earlier version after the .gz was renamed into place.
    for (std::size_t i = 0; i < set.plain.size(); ++i) {
        if (exists(set.gz[i]) && exists(set.plain[i])) ::unlink(set.plain[i].c_str());
    }
    DIR* directory = ::opendir(set.directory.c_str());
    if (directory == nullptr) return;
    constexpr std::string_view suffix = ".compressing";
    try {
        while (const dirent* entry = ::readdir(directory)) {
            const std::string_view name = entry->d_name;
            if (!name.starts_with(set.hidden_prefix) || !name.ends_with(suffix)) continue;
            const std::string_view digits =
                name.substr(set.hidden_prefix.size(), name.size() - set.hidden_prefix.size() - suffix.size());
            unsigned slot = 0;
            const auto [end, failed] = std::from_chars(digits.data(), digits.data() + digits.size(), slot);
            if (digits.empty() || failed != std::errc{} || end != digits.data() + digits.size() || slot == 0) continue;
            const std::string hidden = set.directory + "/" + std::string(name);
            const std::string plain = set.path + "." + std::to_string(slot);
            if (exists(plain + ".gz")) {
                ::unlink(hidden.c_str());
            } else if (exists(plain)) {
                set.report("recover (another file holds its slot)", EEXIST);  // stays hidden: neither is lost
            } else if (::rename(hidden.c_str(), plain.c_str()) != 0) {
                set.report("recover (rename)", errno);
            }
        }
    } catch (...) {  // out of memory: the next start tries again
    }
    ::closedir(directory);
}

/// Deletes the rotated files from the first one, newest first, that is older than max_age or
/// takes the total past max_total_bytes, and notes when the oldest kept one will age out.
void apply_retention(RotatedSet& set) noexcept {
    set.next_expiry = SystemClock::time_point::max();
    if (set.max_age.count() == 0 && set.max_total_bytes == 0) return;
    const SystemClock::time_point now = SystemClock::now();
    std::uint64_t total = 0;
    std::size_t cut = set.plain.size();
    for (std::size_t i = 0; i < set.plain.size(); ++i) {
        struct stat st {};
        if (::lstat(set.gz[i].c_str(), &st) != 0 && ::lstat(set.plain[i].c_str(), &st) != 0) continue;
        total += static_cast<std::uint64_t>(st.st_size);
        const auto written = SystemClock::time_point(std::chrono::duration_cast<SystemClock::duration>(
            std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
        const bool too_old = set.max_age.count() > 0 && written + set.max_age <= now;
        if (too_old || (set.max_total_bytes > 0 && total > set.max_total_bytes)) {
            cut = i;
            break;
        }
        if (set.max_age.count() > 0) set.next_expiry = std::min(set.next_expiry, written + set.max_age);
    }
    for (std::size_t i = cut; i < set.plain.size(); ++i) {
        for (const std::string* name : {&set.plain[i], &set.gz[i]}) {
            if (::unlink(name->c_str()) != 0 && errno != ENOENT) set.report("retention (unlink)", errno);
        }
    }
}

/// Everything due for `set`: compression and retention.
void look_at(RotatedSet& set, std::unique_lock<std::mutex>& lock) noexcept {
    if (set.compress == FileCompression::gzip) {
        for (std::size_t i = 0; i < set.plain.size() && !cancelled(set); ++i) {
            if (exists(set.plain[i]) && !exists(set.gz[i])) compress_one(set, i, lock);
        }
    }
    apply_retention(set);
}

void run(std::uint64_t generation) {
    name_this_thread("fieldlog-files");
    Worker& w = worker();
    std::unique_lock lock(w.mutex);
    while (w.generation == generation) {
        const SystemClock::time_point now = SystemClock::now();
        SystemClock::time_point next = SystemClock::time_point::max();
        RotatedSet* due = nullptr;
        for (RotatedSet* set : w.sets) {
            if (w.exiting.load(std::memory_order_relaxed)) break;
            if (set->pending || set->next_expiry <= now) {
                due = set;
                break;
            }
            next = std::min(next, set->next_expiry);
        }
        if (due == nullptr) {
            if (next == SystemClock::time_point::max()) {
                w.changed.wait(lock);
            } else {
                w.changed.wait_until(lock, next);
            }
            continue;
        }
        due->pending = false;
        w.busy = due;
        look_at(*due, lock);
        w.busy = nullptr;
        w.changed.notify_all();
    }
}

void start_thread(Worker& w) { w.thread = new std::thread(run, ++w.generation); }

/// Normal exit (return from main, exit()): the worker finishes the step it is in (a compression
/// stops at its next block and puts the plain file back) and starts no other, so the files are
/// whole and each is seen once when the process ends. Files rotated later stay plain.
void stop_at_exit() {
    Worker& w = worker();
    std::unique_lock lock(w.mutex);
    w.exiting.store(true, std::memory_order_relaxed);
    w.changed.wait(lock, [&] { return w.busy == nullptr; });
}

// fork(): the worker lets its mutex go only to compress, so holding it across fork() means
// the child inherits no file half renamed. The child has no worker thread: it starts one.
void before_fork() { worker().mutex.lock(); }

void after_fork_in_parent() { worker().mutex.unlock(); }

void after_fork_in_child() {
    Worker& w = worker();
    new (&w.changed) std::condition_variable;  // the parent's waiter is not here (see base/ticker.cpp)
    w.thread = nullptr;
    w.busy = nullptr;  // its compression goes on in the parent; its temporary is the parent's
    ++w.generation;
    if (!w.sets.empty()) start_thread(w);
    w.mutex.unlock();
}

}  // namespace

RotatedFiles::RotatedFiles(const FileSinkOptions& options, std::function<void()> count_error)
    : set_(std::make_unique<RotatedSet>()) {
    RotatedSet& set = *set_;
    set.path = options.path;
    for (unsigned i = 1; i <= options.keep; ++i) {
        set.plain.push_back(options.path + "." + std::to_string(i));
        set.gz.push_back(set.plain.back() + ".gz");
    }
    const std::size_t slash = options.path.rfind('/');
    set.directory = slash == std::string::npos ? "." : slash == 0 ? "/" : options.path.substr(0, slash);
    const std::string name = slash == std::string::npos ? options.path : options.path.substr(slash + 1);
    set.hidden_prefix = "." + name + ".";
    const std::string hidden_base = set.directory + "/" + set.hidden_prefix;
    for (unsigned i = 1; i <= options.keep; ++i) set.hidden.push_back(hidden_base + std::to_string(i) + ".compressing");
    set.temp = hidden_base + "gz.tmp";
    set.old_temp = options.path + ".gz.tmp";
    set.compress = options.compress;
    set.level = options.compression_level;
    set.max_age = options.max_age;
    set.max_total_bytes = options.max_total_bytes;
    set.count_error = std::move(count_error);
    // On this thread, before the sink is in use: a sink made and soon destroyed recovers too. Also
    // without compression, which an earlier run may have had.
    if (!set.plain.empty()) recover(set);
    if (set.compress == FileCompression::none && set.max_age.count() == 0 && set.max_total_bytes == 0) return;

    Worker& w = worker();
    const std::lock_guard lock(w.mutex);
    if (!w.fork_handlers_installed) {
        add_fork_participant(&before_fork, &after_fork_in_parent, &after_fork_in_child);
        w.fork_handlers_installed = true;
    }
    if (!w.exit_handler_installed) w.exit_handler_installed = std::atexit(&stop_at_exit) == 0;
    if (!w.in) {
        w.in = std::make_unique<unsigned char[]>(kBlock);
        w.out = std::make_unique<unsigned char[]>(kBlock);
    }
    w.sets.push_back(&set);
    set.on_worker = true;
    if (w.thread == nullptr) {
        start_thread(w);
    } else {
        w.changed.notify_all();
    }
}

RotatedFiles::~RotatedFiles() {
    RotatedSet& set = *set_;
    if (!set.on_worker) return;
    Worker& w = worker();
    std::unique_lock lock(w.mutex);
    set.leaving.store(true, std::memory_order_relaxed);
    std::erase(w.sets, &set);
    w.changed.wait(lock, [&] { return w.busy != &set; });
    if (!w.sets.empty() || w.thread == nullptr) return;
    std::thread* last = w.thread;
    w.thread = nullptr;
    ++w.generation;
    w.changed.notify_all();
    lock.unlock();
    last->join();
    delete last;
}

void RotatedFiles::put_back_on_crash() noexcept {
    RotatedSet& set = *set_;
    if (!set.on_worker) return;
    Worker& w = worker();
    w.exiting.store(true, std::memory_order_relaxed);
    // As the crash path takes the sinks' mutexes: this one is taken for good, so the worker
    // does nothing more. Held (the worker is in a rename, or this thread was in shift()): the
    // next start puts the file back.
    if (!w.mutex.try_lock()) return;
    if (RotatedSet* busy = w.busy; busy != nullptr && busy->hidden_at != kNone) {
        ::unlink(busy->temp.c_str());
        ::rename(busy->hidden[busy->hidden_at].c_str(), busy->plain[busy->hidden_at].c_str());
        busy->hidden_at = kNone;
    }
}

int RotatedFiles::shift() noexcept {
    RotatedSet& set = *set_;
    if (set.plain.empty()) return 0;
    std::unique_lock<std::mutex> lock;
    if (set.on_worker) lock = std::unique_lock(worker().mutex);
    const std::size_t last = set.plain.size() - 1;
    const bool compressing = set.compress == FileCompression::gzip;
    ::unlink(set.plain[last].c_str());
    ::unlink(set.gz[last].c_str());
    if (compressing) ::unlink(set.hidden[last].c_str());
    for (std::size_t i = last; i > 0; --i) {
        ::rename(set.plain[i - 1].c_str(), set.plain[i].c_str());
        ::rename(set.gz[i - 1].c_str(), set.gz[i].c_str());
        if (compressing) ::rename(set.hidden[i - 1].c_str(), set.hidden[i].c_str());
    }
    if (set.hidden_at != kNone) set.hidden_at = set.hidden_at < last ? set.hidden_at + 1 : kNone;
    const int error = ::rename(set.path.c_str(), set.plain[0].c_str()) != 0 && errno != ENOENT ? errno : 0;
    if (set.on_worker) {
        set.pending = true;
        worker().changed.notify_all();
    }
    return error;
}

}  // namespace fieldlog::detail
