// SPDX-License-Identifier: MIT
// The file sink's rotated files, path.1 (newest) … path.keep, each plain or gzip-compressed
// (path.N.gz): the shift a rotation makes, between records on the caller's path, and the
// process's one retention worker, a thread of its own that compresses rotated files and deletes
// those past max_age or max_total_bytes, so that neither ever runs on the caller's path.
// Internal to sinks/.
#pragma once

#include <functional>
#include <memory>

#include "fieldlog/sinks/file_sink.hpp"

namespace fieldlog::detail {

struct RotatedSet;  // the names, limits and worker state of one sink's rotated files

/// One file sink's rotated files. With compression or an age or size limit in its options it
/// joins the worker (started with the first such sink, joined when the last one goes), which
/// looks at the files at once (what an earlier run left counts) and again after every shift.
class RotatedFiles {
public:
    /// Puts back, on this thread, what a process that died while compressing left (hidden
    /// files, temporaries). `count_error` is called for each failed system call, here and on
    /// the worker thread.
    RotatedFiles(const FileSinkOptions& options, std::function<void()> count_error);
    /// Leaves the worker: a compression in progress stops at its next block and puts the plain
    /// file back (and leaves no temporary); on return the worker no longer touches these files.
    ~RotatedFiles();
    RotatedFiles(const RotatedFiles&) = delete;
    RotatedFiles& operator=(const RotatedFiles&) = delete;

    /// Drops path.keep (plain, .gz or hidden while compressed), moves each path.i to path.(i+1)
    /// (each form) and `path` to path.1; with keep = 0 it does nothing. Returns 0, or the errno
    /// of moving `path` (gone: 0). May wait for the worker's renames and deletions, never for a
    /// compression. Allocates nothing.
    int shift() noexcept;

    /// The crash path (async-signal-safe): puts a file being compressed, of any sink, back to
    /// its plain name and stops the worker for good; does nothing when the worker holds its
    /// mutex (one of its renames under way), which leaves the next start to do it.
    void put_back_on_crash() noexcept;

private:
    std::unique_ptr<RotatedSet> set_;
};

}  // namespace fieldlog::detail
