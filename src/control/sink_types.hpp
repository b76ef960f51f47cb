// SPDX-License-Identifier: MIT
// The registry of sink types (fieldlog/sink_registry.hpp) as the configuration reader sees it.
// Cold path.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fieldlog/sink_registry.hpp"

namespace fieldlog::detail {

/// The keys every sink's table takes (SinkConfig's own), read by the reader, not the sink type.
inline constexpr std::string_view every_sink_key[] = {"type",      "name",  "format",       "level",   "caller", "tid",
                                                      "timestamp", "color", "logger_width", "loggers", "exclude"};

/// The built-in sink types, in the order of their fieldlog_sink_module() lines in CMakeLists.txt
/// (a source the build generates: cmake/FieldlogSinkModules.cmake).
std::vector<SinkType> builtin_sink_types();

/// The sink type `name` names, or nullopt.
std::optional<SinkType> find_sink_type(std::string_view name);

/// The name of every sink type: the built-in ones, then the program's in the order registered.
std::vector<std::string> sink_type_names();

}  // namespace fieldlog::detail
