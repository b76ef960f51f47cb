// SPDX-License-Identifier: MIT
// The file sink: appends records to a file through a userspace buffer, rotates by size and/or
// time, lets go of a file logrotate moved, and survives a full disk. It sits at the end of the
// record path: the dispatcher calls it, one thread at a time under its mutex(), including its
// periodic chores (flush after flush_interval, checking the path) from the background tick.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

/// Time-based rotation: at the top of each hour, or at midnight (UTC or local time).
enum class RotateEvery : std::uint8_t { never, hour, day };

/// What becomes of a rotated file: left as it is, or gzip-compressed to path.N.gz.
enum class FileCompression : std::uint8_t { none, gzip };

struct FIELDLOG_API FileSinkOptions {
    std::string path;
    /// Userspace buffer; 0 writes each record through. The default is zap's too: fewer, larger
    /// writes cost a busy log less kernel time (docs/performance-notes.md); the flush interval
    /// still bounds how long a record waits.
    std::size_t buffer_size = 256 * 1024;
    std::chrono::milliseconds flush_interval{1000};  ///< buffered bytes wait at most about this long; 0: no wait
    bool fsync_on_flush = false;                   ///< fsync(2) after each flush (durable, slow)
    Level flush_level = Level::error;              ///< a record at or above this flushes at once
    std::uint64_t max_size = 0;                    ///< rotate before a record would pass this size; 0: never
    RotateEvery rotate_every = RotateEvery::never;
    bool rotate_utc = false;                       ///< time rotation at UTC (true) or local boundaries
    unsigned keep = 5;                             ///< rotated files kept: path.1 (newest) … path.N
    std::chrono::milliseconds reopen_check{1000};  ///< how often to look for a moved/deleted file; 0: never
    /// Rotated files last written longer ago than this are deleted; 0: no age limit.
    std::chrono::seconds max_age{0};
    /// Rotated files are deleted from the first one, newest first, that takes their total past
    /// this; 0: no limit. The live file is not counted.
    std::uint64_t max_total_bytes = 0;
    FileCompression compress = FileCompression::none;  ///< gzip: rotated files become path.N.gz
    int compression_level = 6;                         ///< zlib's, 1 (fastest) to 9 (smallest)
    /// Permission bits of a file the sink creates (not of one that exists), set with fchmod(2)
    /// so the umask takes nothing off; rotated and .gz files keep the live file's. The owner
    /// must be able to write: 0200 set, nothing above 0777.
    unsigned mode = 0640;
    /// false: `path` itself may not be a symbolic link (its directories may), since a planted
    /// link would send the log elsewhere; opening it fails, also on a reopen.
    bool follow_symlinks = false;

    friend bool operator==(const FileSinkOptions&, const FileSinkOptions&) = default;
};

/// SinkTarget's hooks (fieldlog/sink_target.hpp): what configure() makes of these options.
FIELDLOG_API std::shared_ptr<Sink> make_sink(const FileSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const FileSinkOptions& options);

/// Appends to `path`, opened O_WRONLY|O_APPEND|O_CLOEXEC, and O_NOFOLLOW unless follow_symlinks
/// (missing directories are created; a file it creates gets `mode`, 0640 by default).
///
/// - Records are gathered in a buffer allocated once and written with one write(2) when it is
///   full, when a record at flush_level or above arrives, when flush_interval has passed (the
///   background tick), on flush(), shutdown(), normal exit and destruction.
/// - Rotation happens between records, so every file starts and ends on a record boundary and
///   exceeds max_size by at most one record (only when that record alone is larger). The new
///   file is opened (as the hidden `.name.rotating` beside `path`) before any old file is renamed
///   or dropped; then path.N is dropped, path.(N-1) → path.N, …, path → path.1 (each with its
///   .gz, if compressed), and .name.rotating → path.
/// - After logrotate renamed or deleted the file, the sink reopens `path` when reopen() is called
///   (SIGHUP, fieldlog::reopen_files(), fieldlog::reload()) or when the background check finds
///   another inode at `path` (at most reopen_check later). Until then records go to the moved
///   file: none is lost. The reopen follows the same rules for `mode` and symbolic links.
/// - A failed or short write (ENOSPC, EIO, …) truncates the file back to the last complete
///   record, counts the records lost as dropped and reports on stderr at most once per second;
///   the next flush tries again, so logging resumes by itself when space returns.
/// - Opening a file whose last byte is not '\n' (a crash tore the last record) starts the next
///   record on a fresh line.
/// - With compress, max_age or max_total_bytes, the process's retention worker (a thread of its
///   own, never the caller's) looks at path.1 … path.keep when the sink is made (files of
///   earlier runs count) and after each rotation, and deletes the files past max_age or
///   max_total_bytes. It compresses each plain path.N in four steps, each one atomic: rename it
///   to the hidden `.name.N.compressing` (a rotation moves it to .name.(N+1).compressing along
///   with its slot), deflate it into the hidden `.name.gz.tmp` and fsync that, rename the
///   temporary to path.N.gz, delete the hidden file. When it cannot finish (a full disk, the
///   sink destroyed, normal exit) it deletes the temporary and renames the hidden file back.
///
/// The rule for a reader of the log files (a shipper that globs `path*`): at every moment each
/// record is in at most one of `path`, path.N and path.N.gz; a .gz is always whole; the
/// temporaries are hidden names (`.name.…`, outside any glob of `path*` or `*`).
/// - Normal exit (return from main, exit()) and shutdown(): every record is in exactly one of
///   them when the process ends. The exit handler stops the worker at its next step (a
///   compression at its next block) and puts the plain file back; files rotated after that
///   stay plain until the next start.
/// - A fatal signal (SIGSEGV, SIGABRT, …) or SIGTERM/SIGINT through fieldlog's handlers (which
///   configure() installs unless Config::crash_handlers is off): the final flush puts the file
///   being compressed back as well, unless the worker is in one of its renames then.
/// - Otherwise (SIGKILL, a signal met mid-rename or without fieldlog's handlers, a power cut):
///   the file being compressed may be left under its hidden name, its records
///   invisible (never twice) until a sink on the same path starts again. That start puts it
///   back to path.N (or deletes it when its path.N.gz is whole), deletes the temporaries, also
///   the `path.gz.tmp` and `path.rotating` of earlier versions, and compresses what is plain,
///   as usual. Only these names are ever deleted.
/// - A full disk: the compression gives up, the plain file is put back, the error is counted.
///
/// Construction throws std::system_error when the file cannot be opened, std::invalid_argument
/// for a compression_level outside 1-9, a mode that is not one, or a `path` that is a symbolic
/// link without follow_symlinks ("… is a symbolic link; set follow_symlinks = true to allow
/// it"); later failures (also the worker's) are counted and reported on stderr, and never reach
/// the caller. Holds no lock of its own: called directly (not through configure()), it is one
/// thread's at a time, and tick() is the caller's to call.
class FIELDLOG_API FileSink final : public Sink {
public:
    explicit FileSink(FileSinkOptions options);
    ~FileSink() override;

    void write(const RecordView& record) override;
    void write_batch(std::span<const RecordView> records) override;
    void flush() override;
    /// Writes the buffer, closes the file and opens `path` again (after logrotate's rename).
    void reopen() override;
    /// Flushes what waited flush_interval; reopens `path` when another file is there or it was
    /// deleted (seen twice in a row: logrotate may be between its rename and its create).
    void tick(std::chrono::steady_clock::time_point now) override;
    /// Crash path: write(2) of the buffered records, then of `records` (async-signal-safe).
    void write_on_crash(std::span<const RecordView> records) noexcept override;
    /// Kind "file", the path, and a tick period of min(flush_interval, reopen_check) (0 when
    /// neither applies).
    [[nodiscard]] SinkInfo info() const override;

    [[nodiscard]] const FileSinkOptions& options() const noexcept;

private:
    struct FIELDLOG_LOCAL State;  // the implementation: not exported with the class
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog
