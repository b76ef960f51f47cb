// The file sink: records are gathered in a userspace buffer and written with one write() when
// the buffer fills, a record at flush_level or above arrives, flush_interval has passed, or on
// flush()/close().
#include "fieldlog/sinks/file_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace fieldlog {

FileSink::FileSink(FileSinkOptions options) : options_(std::move(options)) {
    buffer_.resize(options_.buffer_size);
    open_file();
}

FileSink::~FileSink() {
    if (fd_ >= 0) {
        flush();
        ::close(fd_);
    }
}

void FileSink::open_file() {
    const std::filesystem::path path(options_.path);
    if (path.has_parent_path()) {
        std::error_code ignored;  // open() below reports the real problem
        std::filesystem::create_directories(path.parent_path(), ignored);
    }
    fd_ = ::open(options_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + options_.path);
}

void FileSink::write(std::span<const char> record) { append(record); }

void FileSink::write_record(const RecordView& record) {
    append(record.bytes);
    if (record.level >= options_.flush_level) flush();
}

void FileSink::append(std::span<const char> record) {
    const auto now = std::chrono::steady_clock::now();
    if (used_ > 0 && now - first_unflushed_ >= options_.flush_interval) flush();
    if (record.size() > buffer_.size() - used_) {
        flush();
        if (record.size() > buffer_.size()) {  // larger than the whole buffer: write through
            if (write_out(record.data(), record.size())) {
                count_written(1, record.size());
            } else {
                count_dropped();
            }
            return;
        }
    }
    if (used_ == 0) first_unflushed_ = now;
    std::memcpy(buffer_.data() + used_, record.data(), record.size());
    used_ += record.size();
    count_written(1, record.size());
}

void FileSink::flush() {
    if (used_ == 0) return;
    write_out(buffer_.data(), used_);
    used_ = 0;
    if (options_.fsync_on_flush && fd_ >= 0) ::fsync(fd_);
}

bool FileSink::write_out(const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd_, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            count_error();
            const auto now = std::chrono::steady_clock::now();
            if (now - last_error_report_ >= std::chrono::seconds(1)) {
                last_error_report_ = now;
                std::fprintf(stderr, "fieldlog: file sink %s: %s\n", options_.path.c_str(), std::strerror(errno));
            }
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

void FileSink::close() {
    flush();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

void FileSink::reopen() {
    flush();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    try {
        open_file();
    } catch (const std::system_error& e) {
        count_error();
        std::fprintf(stderr, "fieldlog: %s\n", e.what());
    }
}

}  // namespace fieldlog
