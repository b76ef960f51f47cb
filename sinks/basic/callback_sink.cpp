// SPDX-License-Identifier: MIT
// The callback sink: forwards each record to the user's function. A callback that throws costs
// that record, never the caller (the dispatcher's exception policy, dispatch/sink_calls.hpp).
#include "fieldlog/sinks/callback_sink.hpp"

#include <utility>

namespace fieldlog {

CallbackSink::CallbackSink(std::function<void(std::string_view)> on_record, std::function<void()> on_flush)
    : on_line_(std::move(on_record)), on_flush_(std::move(on_flush)) {}

CallbackSink::CallbackSink(std::function<void(const RecordView&)> on_record, std::function<void()> on_flush)
    : on_record_(std::move(on_record)), on_flush_(std::move(on_flush)) {}

void CallbackSink::write(const RecordView& record) {
    if (on_record_) {
        on_record_(record);
    } else if (on_line_) {
        std::string_view line(record.bytes.data(), record.bytes.size());
        if (line.ends_with('\n')) line.remove_suffix(1);
        on_line_(line);
    }
}

void CallbackSink::flush() {
    if (on_flush_) on_flush_();
}

}  // namespace fieldlog
