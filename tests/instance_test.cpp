// SPDX-License-Identifier: MIT
// Two copies of the library in one process (this test binary and a plugin that links fieldlog
// statically): each keeps its own configuration, and the second says so once on stderr.
#include <dlfcn.h>

#include <catch2/catch.hpp>

#include <string>

#include "support/test_support.hpp"

TEST_CASE("A second copy of the library in the process says so once on stderr and keeps its own sinks",
          "[instance]") {
    const fieldlog_test::TempDir dir;
    const auto ours = fieldlog_test::capture();
    fieldlog::get("svc").info("before the plugin");  // this copy's state exists by now

    const std::string errors = dir.file("stderr.txt");
    const std::string plugin_log = dir.file("plugin.log");
    {
        const fieldlog_test::StderrTo to_file(errors);
        void* plugin = ::dlopen(FIELDLOG_SECOND_COPY_PLUGIN, RTLD_NOW | RTLD_LOCAL);
        REQUIRE(plugin != nullptr);
        auto* log = reinterpret_cast<void (*)(const char*)>(::dlsym(plugin, "fieldlog_second_copy_log"));
        REQUIRE(log != nullptr);
        log(plugin_log.c_str());
        log(plugin_log.c_str());  // the same copy again: no second line
        ::dlclose(plugin);
    }
    fieldlog::get("svc").info("after the plugin");

    const std::string said = fieldlog_test::read_file(errors);
    CHECK(said.find("fieldlog: a second copy of the library started in this process") == 0);
    CHECK(said.find('\n') == said.size() - 1);  // one line
    const auto plugin_lines = fieldlog_test::read_lines(plugin_log);
    REQUIRE(plugin_lines.size() == 2);
    CHECK(plugin_lines[0].find(R"("logger":"plugin","msg":"from the second copy")") != std::string::npos);
    REQUIRE(ours->lines().size() == 2);  // the plugin's configure() changed nothing here
    CHECK(ours->lines()[1] == fieldlog_test::info_line("after the plugin", ""));
}
