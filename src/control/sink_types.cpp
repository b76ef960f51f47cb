// SPDX-License-Identifier: MIT
// The registry of sink types: the built-in ones, then those the program registers. Cold path.
#include "control/sink_types.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include "base/builtin_sink_types.hpp"

namespace fieldlog {
namespace detail {
namespace {

struct SinkTypes {
    std::mutex mutex;
    std::vector<SinkType> types;
};

SinkTypes& sink_types() {
    static SinkTypes registry{.mutex = {},
                              .types = {stdout_sink_type(), stderr_sink_type(), file_sink_type(), udp_sink_type(),
                                        journald_sink_type(), syslog_sink_type(), null_sink_type(), otlp_sink_type()}};
    return registry;
}

}  // namespace

std::optional<SinkType> find_sink_type(std::string_view name) {
    SinkTypes& registry = sink_types();
    const std::lock_guard lock(registry.mutex);
    for (const SinkType& type : registry.types) {
        if (type.name == name) return type;
    }
    return std::nullopt;
}

std::vector<std::string> sink_type_names() {
    SinkTypes& registry = sink_types();
    const std::lock_guard lock(registry.mutex);
    std::vector<std::string> names;
    for (const SinkType& type : registry.types) names.push_back(type.name);
    return names;
}

}  // namespace detail

void register_sink_type(std::string name, std::vector<std::string> keys, SinkFactory factory) {
    if (name.empty()) throw std::invalid_argument("register_sink_type: an empty name");
    if (!factory) throw std::invalid_argument("register_sink_type: \"" + name + "\" without a factory");
    for (const std::string& key : keys) {
        if (std::ranges::find(detail::every_sink_key, key) != std::end(detail::every_sink_key)) {
            throw std::invalid_argument("register_sink_type: \"" + name + "\" declares the key \"" + key +
                                        "\", which every sink takes");
        }
    }
    detail::SinkTypes& registry = detail::sink_types();
    const std::lock_guard lock(registry.mutex);
    for (const SinkType& type : registry.types) {
        if (type.name == name) throw std::invalid_argument("register_sink_type: \"" + name + "\" is registered already");
    }
    registry.types.push_back({std::move(name), std::move(keys), std::move(factory)});
}

}  // namespace fieldlog
