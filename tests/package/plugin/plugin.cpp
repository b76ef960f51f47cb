// SPDX-License-Identifier: MIT
// A plugin that logs through fieldlog: run.sh builds it with a static fieldlog linked into it
// (-fPIC -fvisibility=hidden, so none of fieldlog's symbols leave the plugin) and against the
// shared libfieldlog.so.0. Its one export configures a stdout sink, logs one record with a
// field naming the plugin, and shuts fieldlog down.
#include <cstdio>
#include <exception>

#include <fieldlog/fieldlog.hpp>

extern "C" __attribute__((visibility("default"))) int fieldlog_plugin_run(const char* name) noexcept {
    try {
        fieldlog::Config config;
        config.sinks = {fieldlog::SinkConfig{.target = fieldlog::StdoutSinkOptions{}}};
        fieldlog::configure(config);
        fieldlog::get("plugin").info("hello from a plugin", {{"plugin", name}, {"answer", 42}});
        fieldlog::shutdown();
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "plugin %s: %s\n", name, e.what());
        return 1;
    }
}
