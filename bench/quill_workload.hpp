// SPDX-License-Identifier: MIT
// quill's side of the request_7 comparison (bench/quill_compare.cpp, and bench/latency.cpp when
// built with quill): the 7 values of Request7 (workloads.hpp) as quill's named arguments, to
// quill's JsonFileSink through its backend thread. Built only with FIELDLOG_QUILL_INCLUDE, a
// quill checkout beside the repository (bench/README.md); never a dependency of the project.
#pragma once

#include <string>

#include "quill/Backend.h"
#include "quill/Frontend.h"
#include "quill/LogMacros.h"
#include "quill/Logger.h"
#include "quill/sinks/JsonSink.h"
#include "workloads.hpp"

namespace fieldlog_bench {

/// Starts quill's backend thread (once per process) and returns a logger writing JSON lines
/// to `path`, created anew.
inline quill::Logger* make_quill_json_logger(const std::string& path) {
    static const bool started = [] {
        quill::Backend::start(quill::BackendOptions{});
        return true;
    }();
    (void)started;
    auto sink = quill::Frontend::create_or_get_sink<quill::JsonFileSink>(
        path,
        [] {
            quill::FileSinkConfig config;
            config.set_open_mode('w');
            config.set_filename_append_option(quill::FilenameAppendOption::None);
            return config;
        }(),
        quill::FileEventNotifier{});
    // The JSON sink writes its own members: no text pattern to format.
    return quill::Frontend::create_or_get_logger(path, std::move(sink),
                                                 quill::PatternFormatterOptions{"", "%H:%M:%S.%Qns", quill::Timezone::GmtTime});
}

/// request_7 as quill writes it: the template's holes become the JSON members.
inline void log_request_7(quill::Logger* log, const Request7& r = kRequest7) {
    LOG_INFO(log, "request {method} {path} {status} in {latency_us:.1f} us user={user} bytes={bytes} cached={cached}",
             r.method, r.path, r.status, r.latency_us, r.user, r.bytes, r.cached);
}

/// Waits until quill's backend has written everything `log` logged.
inline void drain(quill::Logger* log) { log->flush_log(); }

}  // namespace fieldlog_bench
