// SPDX-License-Identifier: MIT
// fieldlog: structured logging for C++ services. This header has all of it, for the file that
// configures; a file that only logs includes fieldlog/log.hpp, which compiles faster.
//   fieldlog::Logger log = fieldlog::get("http").with({{"service", "checkout"}});
//   log.info("request done", {{"status", 200}, {"latency", 1250us}});
#pragma once

#include "fieldlog/backtrace.hpp"
#include "fieldlog/config.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/export.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/log.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/metrics.hpp"
#include "fieldlog/rate_limit.hpp"
#include "fieldlog/scope.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sink_target.hpp"
#include "fieldlog/sinks/basic_sinks.hpp"
#include "fieldlog/sinks/callback_sink.hpp"
#include "fieldlog/sinks/file_sink.hpp"
#include "fieldlog/sinks/journald_sink.hpp"
#include "fieldlog/sinks/syslog_sink.hpp"
#include "fieldlog/sinks/udp_sink.hpp"
#include "fieldlog/timestamp.hpp"
#include "fieldlog/trace_context.hpp"
