// SPDX-License-Identifier: MIT
// The simple sinks as a configuration names them: "stdout", "stderr" and "null" (none takes a
// key of its own), and what configure() makes of StdoutSinkOptions.
#include <memory>

#include "fieldlog/sinks/basic_sinks.hpp"
#include "base/builtin_sink_types.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const StdoutSinkOptions& options) { return std::make_shared<StdoutSink>(options.stream); }

SinkDestination sink_destination(const StdoutSinkOptions& options) {
    return {.kind = options.stream == StdStream::err ? "stderr" : "stdout", .exclusive = true};
}

namespace detail {

SinkType stdout_sink_type() {
    return {"stdout", {}, [](SinkSettings&) -> SinkTarget { return StdoutSinkOptions{.stream = StdStream::out}; }};
}

SinkType stderr_sink_type() {
    return {"stderr", {}, [](SinkSettings&) -> SinkTarget { return StdoutSinkOptions{.stream = StdStream::err}; }};
}

SinkType null_sink_type() {
    return {"null", {}, [](SinkSettings&) -> SinkTarget { return std::make_shared<NullSink>(); }};
}

}  // namespace detail
}  // namespace fieldlog
