// The callback sink: forwards each record to the user's function and counts what happened.
// A callback that throws costs that record, never the caller.
#include "fieldlog/sinks/callback_sink.hpp"

#include <chrono>
#include <utility>

namespace fieldlog {

CallbackSink::CallbackSink(std::function<void(std::string_view)> on_record, std::function<void()> on_flush)
    : on_line_(std::move(on_record)), on_flush_(std::move(on_flush)) {}

CallbackSink::CallbackSink(std::function<void(const RecordView&)> on_record, std::function<void()> on_flush)
    : on_record_(std::move(on_record)), on_flush_(std::move(on_flush)) {}

void CallbackSink::write(std::span<const char> record) {
    write_record(RecordView{record, Level::info, Timestamp(std::chrono::system_clock::now())});
}

void CallbackSink::write_record(const RecordView& record) {
    try {
        if (on_record_) {
            on_record_(record);
        } else if (on_line_) {
            std::string_view line(record.bytes.data(), record.bytes.size());
            if (line.ends_with('\n')) line.remove_suffix(1);
            on_line_(line);
        }
        count_written(1, record.bytes.size());
    } catch (...) {
        count_error();
        count_dropped();
    }
}

void CallbackSink::flush() {
    if (!on_flush_) return;
    try {
        on_flush_();
    } catch (...) {
        count_error();
    }
}

}  // namespace fieldlog
