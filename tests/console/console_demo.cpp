// SPDX-License-Identifier: MIT
// The console format on a terminal, for the tmux test (tmux_test.py): a few records of the
// kinds people read — loggers of different lengths, bound fields, a multi-line message, a stack
// trace in a field, a fmt message — written to stdout at a fixed time, so the screen is the
// same on every run. Colour is `auto`: on in the tmux pane, off when piped.
#include <fieldlog/fieldlog.hpp>

#include <chrono>

using namespace std::chrono_literals;

namespace {

/// 2026-11-30T08:38:11.123456789Z, as in the unit tests' golden lines.
fieldlog::Timestamp fixed_clock() noexcept { return fieldlog::Timestamp{1'796'027'891, 123'456'789}; }

}  // namespace

int main() {
    fieldlog::configure({.level = fieldlog::Level::debug,
                         .format = fieldlog::Format::console,
                         .sinks = {{.target = fieldlog::StdoutSinkOptions{},
                                    .timestamp = fieldlog::TimestampPrecision::short_time}},
                         .clock = &fixed_clock});
    const fieldlog::Logger http = fieldlog::get("http").with({{"service", "checkout"}});
    http.info("request done", {{"status", 200}, {"latency", 1250us}, {"path", "/cart"}, {"ok", true}});
    fieldlog::get("db").debug("query", {{"rows", 3}, {"took", 1500ns}});
    fieldlog::get("cache").info("warmed in {} ms", 42);
    fieldlog::get("payments.reconcile").warn("retrying charge", {{"attempt", 2}});
    fieldlog::get("jobs").error("job failed\n  at worker.cpp:88\n  at main.cpp:12", {{"job", "nightly"}});
    fieldlog::get("jobs").error("crash", {{"stack", "main.cpp:12 main()\nworker.cpp:88 run()"}});
    fieldlog::get("").info("started", {{"pid", 4242}});
    fieldlog::shutdown();
}
