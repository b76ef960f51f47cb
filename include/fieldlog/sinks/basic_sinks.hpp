// The simple sinks: standard output/error, null (encode, then drop) and memory (keeps lines,
// for tests — yours too). The dispatcher calls them one thread at a time.
#pragma once

#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "fieldlog/sink.hpp"

struct iovec;

namespace fieldlog {

enum class StdStream : std::uint8_t { out, err };

/// Writes to file descriptor 1 or 2: one write() per record or batch, so records up to
/// PIPE_BUF bytes never interleave with other processes on the same pipe. EPIPE is counted,
/// never fatal (SIGPIPE is not raised for these writes).
class StdoutSink final : public Sink {
public:
    explicit StdoutSink(StdStream stream = StdStream::out);
    void write(std::span<const char> record) override;
    void write_batch(std::span<const RecordView> records) override;
    void flush() override {}
    [[nodiscard]] bool is_terminal() const noexcept override { return terminal_; }

private:
    bool write_guarded(::iovec* iov, int count) noexcept;

    int fd_;
    bool terminal_;
    bool guard_sigpipe_;
};

/// Drops every record after it was fully encoded; counts them. For benchmarks and for
/// measuring the cost of encoding alone.
class NullSink final : public Sink {
public:
    void write(std::span<const char> record) override { count_written(1, record.size()); }
    void flush() override {}
};

/// Keeps every line (without its '\n') in memory. Thread-safe to read while loggers write.
class MemorySink final : public Sink {
public:
    void write(std::span<const char> record) override;
    void flush() override {}
    /// A copy of the lines so far.
    [[nodiscard]] std::vector<std::string> lines() const;
    void clear();

private:
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
};

}  // namespace fieldlog
