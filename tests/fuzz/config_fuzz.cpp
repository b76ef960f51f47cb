// SPDX-License-Identifier: MIT
// libFuzzer target for the configuration's parsers (src/control/config_toml.cpp, and
// FIELDLOG_LEVEL's syntax in config_env.cpp): any bytes. Config::parse either returns a
// configuration that keeps the promises its checks make, or throws ConfigError naming the
// source; never another exception, a crash or a hang. The level syntax either fills its
// outputs or throws ConfigError having changed nothing. Seeds: tests/fuzz/corpus/config/.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "control/state.hpp"
#include "fieldlog/config.hpp"
#include "fuzz_support.hpp"

namespace {

constexpr std::string_view kSource = "fuzz.toml";

/// The promises of a parsed configuration that the reader's checks make.
void check_parsed(const fieldlog::Config& config, std::string_view text) {
    for (const auto& [name, backtrace] : config.backtraces) {
        if (backtrace.records != 0 &&
            (backtrace.keep_from >= backtrace.trigger || backtrace.trigger == fieldlog::Level::off)) {
            fuzz::fail("a backtrace entry that keeps no level was accepted", text);
        }
    }
    for (const auto& [name, sampling] : config.sampling) {
        if (sampling.interval.count() <= 0) fuzz::fail("a sampler with no positive interval was accepted", text);
    }
    if (config.async.queue_bytes == 0) fuzz::fail("an async queue of 0 bytes was accepted", text);
}

/// "ok", or the ConfigError's message; anything else thrown is a finding.
std::string parse_outcome(std::string_view text) {
    try {
        check_parsed(fieldlog::Config::parse(text, kSource), text);
        return "ok";
    } catch (const fieldlog::ConfigError& e) {
        const std::string message = e.what();
        if (!message.starts_with(std::string(kSource) + ":")) fuzz::fail("an error that does not name its source", message);
        return message;
    } catch (...) {
        fuzz::fail("Config::parse threw something other than ConfigError", text);
    }
}

void check_level_spec(std::string_view spec) {
    std::optional<fieldlog::Level> global = fieldlog::Level::fatal;
    std::map<std::string, fieldlog::Level, std::less<>> named{{"untouched", fieldlog::Level::trace}};
    try {
        fieldlog::detail::parse_level_spec(spec, "FIELDLOG_LEVEL", global, named);
    } catch (const fieldlog::ConfigError&) {
        if (global != fieldlog::Level::fatal || named.size() != 1 || named.begin()->first != "untouched")
            fuzz::fail("a rejected level spec changed its outputs", spec);
        return;
    } catch (...) {
        fuzz::fail("parse_level_spec threw something other than ConfigError", spec);
    }
    for (const auto& [name, level] : named) {
        if (name.empty()) fuzz::fail("a level spec gave an empty logger name a level", spec);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string first = parse_outcome(text);
    if (parse_outcome(text) != first) fuzz::fail("the same text parsed two ways", text);
    check_level_spec(text);
    return 0;
}
