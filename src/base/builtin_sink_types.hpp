// SPDX-License-Identifier: MIT
// The built-in sink types as a configuration file names them: each one's name, keys and
// factory, each defined beside its sink (sinks/<sink>_type.cpp); the registry (src/control)
// lists them in this order. Here, below both, so that each can include it.
#pragma once

#include "fieldlog/sink_registry.hpp"

namespace fieldlog::detail {

SinkType stdout_sink_type();
SinkType stderr_sink_type();
SinkType file_sink_type();
SinkType udp_sink_type();
SinkType otlp_sink_type();
SinkType journald_sink_type();
SinkType syslog_sink_type();
SinkType null_sink_type();

}  // namespace fieldlog::detail
