// SPDX-License-Identifier: MIT
// Logs one record through the installed package, to stdout and to the test observer; run.sh
// checks the line, and the exit status says whether the observer kept the record's fields.
#include <fieldlog/fieldlog.hpp>
#include <fieldlog/testing/observer.hpp>

#include <memory>

int main() {
    auto observer = std::make_shared<fieldlog::testing::Observer>();
    fieldlog::configure(fieldlog::Config{.sinks = {fieldlog::SinkConfig{}, {.target = observer}}});
    fieldlog::get("consumer").with({{"package", "installed"}}).info("hello from an installed fieldlog", {{"answer", 42}});
    const std::size_t observed = observer->filter_logger("consumer").filter_field("package", "installed").filter_field("answer", 42).size();
    fieldlog::shutdown();
    return observed == 1 ? 0 : 1;
}
