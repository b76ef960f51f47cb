// SPDX-License-Identifier: MIT
// A program that formats with fmt itself, through libfmt.so, through a second shared library
// and through libspdlog.so, with a static fieldlog linked in (FIELDLOG defined) or without.
// run.sh checks the lines are the same either way: the program's own fmt code stays exported,
// so libfmt.so keeps binding to it rather than to the second library's copy.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#ifdef FIELDLOG
#include <fieldlog/fieldlog.hpp>
#endif

#include <cstdio>
#include <exception>
#include <string>

std::string second_format();

int main() {
#ifdef FIELDLOG
    fieldlog::configure(fieldlog::Config{});
    fieldlog::get("beside").info("fieldlog formats", {{"answer", 42}});
    fieldlog::shutdown();
#endif
    try {
        fmt::memory_buffer own;  // the program's own instance of fmt's formatting core
        fmt::format_to(std::back_inserter(own), "{:?}", "own");
        std::printf("program: %s\n", fmt::to_string(own).c_str());
        std::printf("libfmt: %s\n", fmt::format("{:?}", "shared").c_str());
        std::printf("second: %s\n", second_format().c_str());
        spdlog::set_pattern("spdlog: %v");
        spdlog::info("{:?}", "spdlog");
    } catch (const std::exception& e) {
        std::printf("threw: %s\n", e.what());
        return 1;
    }
}
