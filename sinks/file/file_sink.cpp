// SPDX-License-Identifier: MIT
// The file sink: the dispatcher's writes land in a userspace buffer (one memcpy per record);
// the buffer goes to the file with one writev when it fills, on flush_level, on flush() and
// from the background tick after flush_interval. Rotation, reopening and full-disk recovery
// happen between records. Everything runs under the dispatcher's lock: no lock here.
#include "fieldlog/sinks/file_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

#include "rotated_files.hpp"
#include "sinks/common/sink_io.hpp"

namespace fieldlog {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kOpenFlags = O_WRONLY | O_APPEND | O_CLOEXEC;
constexpr auto kRetryAfterFailure = std::chrono::seconds(1);

/// The first hour or day boundary after `t` (seconds since the epoch), in UTC or local time.
std::int64_t next_boundary(std::int64_t t, RotateEvery every, bool utc) noexcept {
    const std::int64_t step = every == RotateEvery::hour ? 3600 : 86400;
    if (utc) {
        const std::int64_t floored = t >= 0 ? t / step : -((-t + step - 1) / step);
        return (floored + 1) * step;
    }
    const auto now = static_cast<std::time_t>(t);
    std::tm local{};
    ::localtime_r(&now, &local);
    local.tm_sec = 0;
    local.tm_min = 0;
    if (every == RotateEvery::hour) {
        local.tm_hour += 1;
    } else {
        local.tm_hour = 0;
        local.tm_mday += 1;
    }
    local.tm_isdst = -1;
    const std::int64_t next = ::mktime(&local);
    return next > t ? next : t + step;  // a DST gap mktime could not place: fall back
}

/// The options, or std::invalid_argument naming the one that cannot work.
const FileSinkOptions& checked(const FileSinkOptions& options) {
#if !FIELDLOG_WITH_GZIP
    if (options.compress == FileCompression::gzip) {
        throw std::invalid_argument(
            "compress = gzip: this build of fieldlog has no gzip: rebuild with -DFIELDLOG_WITH_GZIP=ON (needs zlib: "
            "zlib1g-dev)");
    }
#endif
    if (options.compression_level < 1 || options.compression_level > 9) {
        throw std::invalid_argument("compression_level: " + std::to_string(options.compression_level) +
                                    " is not a zlib level (1 fastest to 9 smallest)");
    }
    if ((options.mode & ~0777U) != 0 || (options.mode & 0200U) == 0) {
        char octal[24];
        std::snprintf(octal, sizeof octal, "%04o", options.mode);
        throw std::invalid_argument(std::string("mode: ") + octal +
                                    " must be permission bits (0777 at most) that let the owner write (0200)");
    }
    return options;
}

/// The path's directory and a hidden name in it: ".name.suffix" (outside a glob of `path*`).
std::string hidden_name(const std::string& path, const char* suffix) {
    const std::size_t slash = path.rfind('/');
    const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
    return path.substr(0, start) + "." + path.substr(start) + suffix;
}

}  // namespace

struct FileSink::State {
    State(FileSink& sink, FileSinkOptions opts);

    FileSink& owner;
    const FileSinkOptions options;
    std::string rotating_path;     ///< where the next file is opened before renames (hidden)
    detail::RotatedFiles rotated;  ///< path.1 … path.keep; compressed and retained off this thread
    bool flush_by_tick = false;    ///< buffered bytes wait for the tick (flush_interval > 0)

    int fd = -1;
    std::unique_ptr<char[]> buffer;
    std::size_t capacity = 0;
    std::size_t used = 0;
    std::uint64_t buffered_records = 0;
    Clock::time_point first_unflushed{};
    std::uint64_t file_size = 0;    ///< bytes in the open file, as far as we wrote them
    bool need_newline = false;      ///< the file ends in a torn record: start on a fresh line
    bool unsynced = false;          ///< written since the last fsync
    dev_t device = 0;
    ino_t inode = 0;
    std::int64_t next_rotation = INT64_MAX;  ///< seconds since the epoch
    Clock::time_point retry_after{};         ///< after a failed open or rotation
    detail::ErrorReporter errors;

    Clock::time_point next_path_check{};
    bool missing_once = false;  ///< path was gone at the last check (logrotate may be mid-rename)

    int open_file() noexcept;
    int create(const char* name, int flags) const noexcept;
    bool reopen_after_failure() noexcept;
    void reopen_file() noexcept;
    void append(std::span<const char> bytes, const Timestamp& time) noexcept;
    void flush_buffer() noexcept;
    bool write_out(const char* data, std::size_t size, std::uint64_t records) noexcept;
    void rotate(std::int64_t now_seconds) noexcept;
    void report(std::string_view operation, int error) noexcept { errors.report("file", options.path, operation, error); }
};

FileSink::State::State(FileSink& sink, FileSinkOptions opts)
    : owner(sink), options(std::move(opts)), rotated(checked(options), [&sink] { sink.count_error(); }) {
    rotating_path = hidden_name(options.path, ".rotating");
    // A rotation cut off by the process's end left its new file, still empty; earlier versions
    // named it path.rotating.
    ::unlink(rotating_path.c_str());
    ::unlink((options.path + ".rotating").c_str());
    capacity = options.buffer_size;
    if (capacity > 0) buffer = std::make_unique<char[]>(capacity);
    flush_by_tick = capacity > 0 && options.flush_interval.count() > 0;
}

int FileSink::State::open_file() noexcept {
    try {
        const std::filesystem::path path(options.path);
        std::error_code ignored;  // open() below reports the real problem
        if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ignored);
    } catch (...) {  // out of memory: let open() try anyway
    }
    // O_NOFOLLOW: a link planted at the path would send the log elsewhere. Only a file made
    // here gets the mode; one that exists keeps its own.
    const int flags = kOpenFlags | (options.follow_symlinks ? 0 : O_NOFOLLOW);
    int opened = -1;
    for (int attempt = 0; attempt < 3 && opened < 0; ++attempt) {
        opened = create(options.path.c_str(), flags | O_EXCL);
        if (opened >= 0 || errno != EEXIST) break;
        opened = ::open(options.path.c_str(), flags);
        if (opened < 0 && errno == ENOENT && options.follow_symlinks) opened = create(options.path.c_str(), flags);
        if (opened < 0 && errno != ENOENT) break;  // ENOENT: deleted meanwhile, create it again
    }
    if (opened < 0) return errno;
    fd = opened;
    struct stat st {};
    ::fstat(fd, &st);
    device = st.st_dev;
    inode = st.st_ino;
    file_size = static_cast<std::uint64_t>(st.st_size);
    need_newline = false;
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        // O_APPEND|O_WRONLY cannot read; a second descriptor looks at the last byte.
        const int reader = ::open(options.path.c_str(), O_RDONLY | O_CLOEXEC);
        char last = '\n';
        if (reader >= 0) {
            if (::pread(reader, &last, 1, st.st_size - 1) != 1) last = '\n';
            ::close(reader);
        }
        need_newline = last != '\n';
    }
    if (options.rotate_every != RotateEvery::never) {
        const auto now = std::chrono::system_clock::now().time_since_epoch();
        next_rotation = next_boundary(std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                                      options.rotate_every, options.rotate_utc);
    }
    return 0;
}

/// Opens `name` with O_CREAT and gives it the mode exactly: open(2) lets the umask take bits off.
/// Where fchmod(2) fails (a file system without modes) the file keeps what open(2) gave it, never
/// more than the mode.
int FileSink::State::create(const char* name, int flags) const noexcept {
    const int opened = ::open(name, flags | O_CREAT, static_cast<mode_t>(options.mode));
    if (opened >= 0) (void)::fchmod(opened, static_cast<mode_t>(options.mode));
    return opened;
}

bool FileSink::State::reopen_after_failure() noexcept {
    const Clock::time_point now = Clock::now();
    if (now < retry_after) return false;
    if (const int error = open_file(); error != 0) {
        owner.count_error();
        report("open", error);
        retry_after = now + kRetryAfterFailure;
        return false;
    }
    return true;
}

void FileSink::State::reopen_file() noexcept {
    flush_buffer();
    if (fd >= 0) ::close(fd);
    fd = -1;
    retry_after = {};
    reopen_after_failure();
}

void FileSink::State::append(std::span<const char> bytes, const Timestamp& time) noexcept {
    if (fd < 0 && !reopen_after_failure()) {
        owner.count_dropped();
        return;
    }
    if (time.seconds >= next_rotation) {
        if (file_size + used > 0) {
            rotate(time.seconds);
        } else {
            next_rotation = next_boundary(time.seconds, options.rotate_every, options.rotate_utc);
        }
    }
    if (options.max_size != 0 && file_size + used + bytes.size() > options.max_size && file_size + used > 0) {
        rotate(time.seconds);
    }
    if (bytes.size() > capacity - used) {
        flush_buffer();
        if (bytes.size() > capacity) {  // larger than the whole buffer: straight to the file
            write_out(bytes.data(), bytes.size(), 1);
            return;
        }
    }
    if (used == 0 && flush_by_tick) first_unflushed = Clock::now();
    std::memcpy(buffer.get() + used, bytes.data(), bytes.size());
    used += bytes.size();
    ++buffered_records;
}

void FileSink::State::flush_buffer() noexcept {
    if (used > 0) {
        write_out(buffer.get(), used, buffered_records);
        used = 0;
        buffered_records = 0;
    }
    if (options.fsync_on_flush && unsynced && fd >= 0) {
        if (::fsync(fd) != 0) {
            owner.count_error();
            report("fsync", errno);
        }
        unsynced = false;
    }
}

bool FileSink::State::write_out(const char* data, std::size_t size, std::uint64_t records) noexcept {
    if (fd < 0) {
        owner.count_dropped(records);
        return false;
    }
    char newline = '\n';
    iovec iov[2];
    int count = 0;
    const std::size_t prefix = need_newline ? 1 : 0;
    if (need_newline) iov[count++] = iovec{&newline, 1};
    iov[count++] = iovec{const_cast<char*>(data), size};
    std::size_t written = 0;
    const int error = detail::write_all(fd, iov, count, written);
    if (written >= prefix) need_newline = false;
    unsynced = unsynced || written > 0;
    if (error == 0) {
        file_size += written;
        return true;
    }
    // Keep the complete records that made it; cut the torn one off so the file stays whole.
    const std::size_t data_written = written - std::min(written, prefix);
    const void* last_newline = data_written > 0 ? ::memrchr(data, '\n', data_written) : nullptr;
    const std::size_t complete =
        last_newline != nullptr ? static_cast<std::size_t>(static_cast<const char*>(last_newline) - data) + 1 : 0;
    if (const std::size_t torn = data_written - complete; torn > 0) {
        struct stat st {};
        const bool truncated = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                               static_cast<std::uint64_t>(st.st_size) >= torn &&
                               ::ftruncate(fd, st.st_size - static_cast<off_t>(torn)) == 0;
        if (!truncated) need_newline = true;
    }
    file_size += (written - data_written) + complete;
    const auto done = static_cast<std::uint64_t>(std::count(data, data + complete, '\n'));
    owner.count_dropped(records - done);
    owner.count_error();
    report("write", error);
    return false;
}

void FileSink::State::rotate(std::int64_t now_seconds) noexcept {
    const Clock::time_point now = Clock::now();
    if (now < retry_after) return;
    flush_buffer();
    // The new file exists before any old one is renamed over or dropped.
    const int next = create(rotating_path.c_str(), kOpenFlags | O_TRUNC | O_NOFOLLOW);
    if (next < 0) {
        owner.count_error();
        report("open for rotation", errno);
        retry_after = now + kRetryAfterFailure;
        return;
    }
    // Shift the old files up from the oldest (path.N goes), then free path.1.
    if (const int error = rotated.shift(); error != 0) {
        owner.count_error();
        report("rotate (rename)", error);
        ::close(next);
        ::unlink(rotating_path.c_str());
        retry_after = now + kRetryAfterFailure;
        return;
    }
    if (::rename(rotating_path.c_str(), options.path.c_str()) != 0) {
        owner.count_error();
        report("rotate (rename new file)", errno);
    }
    ::close(fd);
    fd = next;
    struct stat st {};
    ::fstat(fd, &st);
    device = st.st_dev;
    inode = st.st_ino;
    file_size = 0;
    need_newline = false;
    unsynced = false;
    // Only now: a rotation that failed is tried again (after retry_after) by the next record.
    if (options.rotate_every != RotateEvery::never) {
        next_rotation = next_boundary(now_seconds, options.rotate_every, options.rotate_utc);
    }
}

FileSink::FileSink(FileSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {
    State& s = *state_;
    if (const int error = s.open_file(); error != 0) {
        struct stat st {};
        if (error == ELOOP && !s.options.follow_symlinks && ::lstat(s.options.path.c_str(), &st) == 0 &&
            S_ISLNK(st.st_mode)) {
            throw std::invalid_argument("\"" + s.options.path +
                                        "\" is a symbolic link; set follow_symlinks = true to allow it");
        }
        throw std::system_error(error, std::generic_category(), "open " + s.options.path);
    }
    s.next_path_check = Clock::now() + s.options.reopen_check;
}

FileSink::~FileSink() {
    State& s = *state_;
    s.flush_buffer();
    if (s.fd >= 0) ::close(s.fd);
}

const FileSinkOptions& FileSink::options() const noexcept { return state_->options; }

SinkInfo FileSink::info() const {
    const State& s = *state_;
    std::chrono::milliseconds period = std::chrono::milliseconds::max();
    if (s.flush_by_tick) period = std::min(period, s.options.flush_interval);
    if (s.options.reopen_check.count() > 0) period = std::min(period, s.options.reopen_check);
    if (period == std::chrono::milliseconds::max()) period = std::chrono::milliseconds(0);
    return {.kind = "file", .target = s.options.path, .tick_period = period};
}

void FileSink::write(const RecordView& record) {
    State& s = *state_;
    s.append(record.bytes, record.time);
    if (record.level >= s.options.flush_level || !s.flush_by_tick) s.flush_buffer();
}

void FileSink::write_batch(std::span<const RecordView> records) {
    State& s = *state_;
    bool flush_now = !s.flush_by_tick;
    for (const RecordView& record : records) {
        s.append(record.bytes, record.time);
        flush_now = flush_now || record.level >= s.options.flush_level;
    }
    if (flush_now) s.flush_buffer();
}

void FileSink::flush() { state_->flush_buffer(); }

void FileSink::reopen() { state_->reopen_file(); }

void FileSink::tick(std::chrono::steady_clock::time_point now) {
    State& s = *state_;
    if (s.fd < 0) {
        s.reopen_after_failure();
    } else if (s.options.reopen_check.count() > 0 && now >= s.next_path_check) {
        s.next_path_check = now + s.options.reopen_check;
        struct stat st {};
        if (::stat(s.options.path.c_str(), &st) == 0) {
            s.missing_once = false;
            if (st.st_dev != s.device || st.st_ino != s.inode) s.reopen_file();
        } else if (errno == ENOENT) {
            // Gone twice in a row: deleted. Gone once: logrotate may be between its rename and
            // its create, and a file we made now would be in its way.
            if (s.missing_once) s.reopen_file();
            s.missing_once = !s.missing_once;
        }
    }
    if (s.used > 0 && s.flush_by_tick && now - s.first_unflushed >= s.options.flush_interval) s.flush_buffer();
}

namespace {
/// write(2) until done or failed; async-signal-safe.
void write_fully(int fd, const char* data, std::size_t size) noexcept {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}
}  // namespace

// The crash path reads the state without the lock: the thread that holds it may be the one
// that crashed. A record counts as buffered only after its memcpy, so the bytes up to `used`
// are whole records.
void FileSink::write_on_crash(std::span<const RecordView> records) noexcept {
    State& s = *state_;
    s.rotated.put_back_on_crash();
    if (s.fd < 0) return;
    if (s.used > 0 || !records.empty()) {
        if (s.need_newline) write_fully(s.fd, "\n", 1);
        s.need_newline = false;
    }
    write_fully(s.fd, s.buffer.get(), s.used);
    s.used = 0;
    s.buffered_records = 0;
    for (const RecordView& record : records) write_fully(s.fd, record.bytes.data(), record.bytes.size());
}

}  // namespace fieldlog
