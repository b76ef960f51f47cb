// The file sink: appends records to a file through a userspace buffer, rotates by size and/or
// time, reopens when logrotate moved the file, and survives a full disk.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fieldlog/sink.hpp"

namespace fieldlog {

enum class RotateEvery : std::uint8_t { never, hour, day };

struct FileSinkOptions {
    std::string path;
    std::size_t buffer_size = 64 * 1024;           ///< userspace buffer; 0 writes through
    std::chrono::milliseconds flush_interval{1000};  ///< flush at the latest this long after a write
    bool fsync_on_flush = false;
    Level flush_level = Level::error;              ///< records at or above this flush at once
    std::uint64_t max_size = 0;                    ///< rotate before exceeding this many bytes; 0: never
    RotateEvery rotate_every = RotateEvery::never;
    bool rotate_utc = false;                       ///< time rotation at UTC (true) or local boundaries
    unsigned keep = 5;                             ///< rotated files kept: path.1 … path.N
    std::chrono::milliseconds reopen_check{1000};  ///< how often to notice a moved/deleted file

    friend bool operator==(const FileSinkOptions&, const FileSinkOptions&) = default;
};

/// Appends to a file opened O_APPEND|O_CLOEXEC (directories are created). Construction throws
/// std::system_error when the file cannot be opened; later failures are counted, reported on
/// stderr at most once per second, and never reach the caller.
class FileSink final : public Sink {
public:
    explicit FileSink(FileSinkOptions options);
    ~FileSink() override;

    void write(std::span<const char> record) override;
    void write_record(const RecordView& record) override;
    void flush() override;
    void close() override;
    /// Closes and reopens the path (after logrotate's rename; what SIGHUP triggers).
    void reopen();

    [[nodiscard]] const FileSinkOptions& options() const noexcept { return options_; }

private:
    void append(std::span<const char> record);
    bool write_out(const char* data, std::size_t size);
    void open_file();

    FileSinkOptions options_;
    int fd_ = -1;
    std::vector<char> buffer_;
    std::size_t used_ = 0;
    std::chrono::steady_clock::time_point first_unflushed_{};
    std::chrono::steady_clock::time_point last_error_report_{};
};

}  // namespace fieldlog
