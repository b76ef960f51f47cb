// SPDX-License-Identifier: MIT
// The callback sink: a sink made from a pair of functions, for programs that hand records to
// something of their own (a test, a metrics pipe, another library) without writing a class.
// It sits at the end of the record path like any sink: one caller at a time.
#pragma once

#include <functional>
#include <string_view>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog {

/// Calls `on_record` for every record and `on_flush` (if given) on flush.
/// The dispatcher calls it from one thread at a time, so the callbacks need no lock of their
/// own. An exception from a callback costs that record (as for every sink: counted as dropped
/// and as an error, reported on stderr at most once a second); it never reaches the logging call.
/// NOTE: the line (or RecordView) is valid only during the call; copy what you keep.
/// **Example**
///   auto sink = std::make_shared<fieldlog::CallbackSink>(
///       [&](std::string_view line) { queue.push(std::string(line)); });
///   fieldlog::configure({.sinks = {{.target = sink}}});
class FIELDLOG_API CallbackSink final : public Sink {
public:
    /// `on_record` receives the line without its trailing '\n'.
    explicit CallbackSink(std::function<void(std::string_view line)> on_record, std::function<void()> on_flush = {});
    /// `on_record` receives the whole record: bytes (with '\n'), level and time.
    explicit CallbackSink(std::function<void(const RecordView& record)> on_record, std::function<void()> on_flush = {});

    void write(const RecordView& record) override;
    void flush() override;
    [[nodiscard]] SinkInfo info() const override { return {.kind = "callback"}; }

private:
    std::function<void(std::string_view)> on_line_;
    std::function<void(const RecordView&)> on_record_;
    std::function<void()> on_flush_;
};

}  // namespace fieldlog
