// SPDX-License-Identifier: MIT
// The simple sinks: standard output/error, null (encode, then drop) and memory (keeps lines,
// for tests — yours too). The dispatcher calls them one thread at a time, under their mutex().
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

struct iovec;

namespace fieldlog {
namespace detail {
class ErrorReporter;
}

enum class StdStream : std::uint8_t { out, err };

/// A StdoutSink's target: standard output or standard error.
struct FIELDLOG_API StdoutSinkOptions {
    StdStream stream = StdStream::out;
    friend bool operator==(const StdoutSinkOptions&, const StdoutSinkOptions&) = default;
};

/// SinkTarget's hooks (fieldlog/sink_target.hpp): what configure() makes of these options.
FIELDLOG_API std::shared_ptr<Sink> make_sink(const StdoutSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const StdoutSinkOptions& options);

/// Writes to file descriptor 1 or 2 with one write(2) per record, or per batch of whole records.
/// On a pipe a batch is cut into writes of at most PIPE_BUF bytes, so records up to PIPE_BUF
/// never interleave with other processes writing to the same pipe. A vanished reader (EPIPE)
/// is counted as an error and a drop and never kills the process: SIGPIPE is blocked around
/// writes to a pipe (unless the program ignores it anyway) and sockets get MSG_NOSIGNAL.
/// Failures are reported on stderr at most once per second (not for the stderr sink itself).
class FIELDLOG_API StdoutSink final : public Sink {
public:
    explicit StdoutSink(StdStream stream = StdStream::out);
    ~StdoutSink() override;
    void write(const RecordView& record) override;
    void write_batch(std::span<const RecordView> records) override;
    void flush() override {}
    /// Crash path: write(2) of the records, SIGPIPE kept away (async-signal-safe).
    void write_on_crash(std::span<const RecordView> records) noexcept override;
    [[nodiscard]] SinkInfo info() const override;

private:
    enum class Destination : std::uint8_t { plain, pipe, socket };
    void write_records(::iovec* iov, int count) noexcept;
    /// The crash path's write: SIGPIPE stays blocked if it raised one.
    void write_while_dying(::iovec* iov, int count) noexcept;

    StdStream stream_;
    int fd_;
    bool terminal_;
    Destination destination_;
    bool guard_sigpipe_;
    std::unique_ptr<detail::ErrorReporter> errors_;
};

/// Drops every record after it was fully encoded (the dispatcher counts them). For benchmarks
/// and for measuring the cost of encoding alone.
class FIELDLOG_API NullSink final : public Sink {
public:
    void write(const RecordView&) override {}
    void flush() override {}
    [[nodiscard]] SinkInfo info() const override { return {.kind = "null"}; }
};

/// Keeps every line (without its '\n') in memory. lines() and clear() may be called from any
/// thread while loggers write (they take mutex(), the lock the dispatcher writes under). Out of
/// memory, write() throws: that record is lost, counted (the dispatcher's exception policy).
class FIELDLOG_API MemorySink final : public Sink {
public:
    void write(const RecordView& record) override;
    void flush() override {}
    [[nodiscard]] SinkInfo info() const override { return {.kind = "memory"}; }
    /// A copy of the lines so far.
    [[nodiscard]] std::vector<std::string> lines() const;
    void clear();

private:
    std::vector<std::string> lines_;
};

}  // namespace fieldlog
