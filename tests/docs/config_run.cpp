// SPDX-License-Identifier: MIT
// The getting-started page's first program, for doc_snippets.py: configures fieldlog from the
// environment (FIELDLOG_CONFIG names the page's configuration), logs one record and closes the
// sinks, so that what each sink wrote can be read.
#include <chrono>

#include <fieldlog/fieldlog.hpp>

using namespace std::chrono_literals;

int main() {
    fieldlog::configure(fieldlog::Config::from_env());
    fieldlog::Logger log = fieldlog::get("http");
    log.info("request done", {{"status", 200}, {"latency", 1250us}, {"path", "/cart"}});
    fieldlog::shutdown();
}
