// SPDX-License-Identifier: MIT
// The registry of sink types: the built-in ones, then those the program registers. Cold path.
#include "control/sink_types.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace fieldlog {
namespace detail {
namespace {

/// Adds `type` to `types` after register_sink_type()'s checks, which a built-in type passes too.
void add_sink_type(std::vector<SinkType>& types, SinkType type) {
    if (type.name.empty()) throw std::invalid_argument("register_sink_type: an empty name");
    if (!type.factory) throw std::invalid_argument("register_sink_type: \"" + type.name + "\" without a factory");
    for (const std::string& key : type.keys) {
        if (std::find(std::begin(every_sink_key), std::end(every_sink_key), key) != std::end(every_sink_key)) {
            throw std::invalid_argument("register_sink_type: \"" + type.name + "\" declares the key \"" + key +
                                        "\", which every sink takes");
        }
    }
    for (const SinkType& known : types) {
        if (known.name == type.name) {
            throw std::invalid_argument("register_sink_type: \"" + type.name + "\" is registered already");
        }
    }
    types.push_back(std::move(type));
}

std::vector<SinkType> checked_builtin_sink_types() {
    std::vector<SinkType> types;
    for (SinkType& type : builtin_sink_types()) add_sink_type(types, std::move(type));
    return types;
}

struct SinkTypes {
    std::mutex mutex;
    std::vector<SinkType> types;
};

SinkTypes& sink_types() {
    static SinkTypes registry{.mutex = {}, .types = checked_builtin_sink_types()};
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
    detail::SinkTypes& registry = detail::sink_types();
    const std::lock_guard lock(registry.mutex);
    detail::add_sink_type(registry.types, {std::move(name), std::move(keys), std::move(factory)});
}

}  // namespace fieldlog
