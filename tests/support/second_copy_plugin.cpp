// SPDX-License-Identifier: MIT
// A module with a copy of fieldlog of its own (linked statically, as a plugin might be), for
// tests/instance_test.cpp: its first record makes a second library state in the process.
#include "fieldlog/fieldlog.hpp"

extern "C" __attribute__((visibility("default"))) void fieldlog_second_copy_log(const char* path) {
    fieldlog::configure(fieldlog::Config{.sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = path}}}});
    fieldlog::get("plugin").info("from the second copy");
    fieldlog::shutdown();
}
