// SPDX-License-Identifier: MIT
// Standard output and error as a configuration names them: "stdout" and "stderr" (neither takes
// a key of its own), and what configure() makes of StdoutSinkOptions.
#include <memory>

#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/basic_sinks.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const StdoutSinkOptions& options) { return std::make_shared<StdoutSink>(options.stream); }

SinkDestination sink_destination(const StdoutSinkOptions& options) {
    return {.kind = options.stream == StdStream::err ? "stderr" : "stdout", .exclusive = true};
}

namespace detail {

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType stdout_sink_type() {
    return {"stdout", {}, [](SinkSettings&) -> SinkTarget { return StdoutSinkOptions{.stream = StdStream::out}; }};
}

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType stderr_sink_type() {
    return {"stderr", {}, [](SinkSettings&) -> SinkTarget { return StdoutSinkOptions{.stream = StdStream::err}; }};
}

}  // namespace detail
}  // namespace fieldlog
