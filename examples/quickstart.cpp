// SPDX-License-Identifier: MIT
// The 30-second tour: configure from fieldlog.toml (or defaults + FIELDLOG_* variables), a
// named logger with bound fields, typed call fields, a fmt message, and the metrics.
#include <fieldlog/fieldlog.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
    const std::string config_path = argc > 1 ? argv[1] : "fieldlog.toml";
    fieldlog::configure(std::filesystem::exists(config_path) ? fieldlog::Config::load(config_path)
                                                             : fieldlog::Config::from_env());

    const fieldlog::Logger log = fieldlog::get("http").with({{"service", "checkout"}, {"version", 3}});
    const std::string path = "/api/v1/cart";
    log.info("request done", {{"status", 200}, {"latency", 1250us}, {"path", path}, {"ok", true}});

    const std::vector<int> sizes{3, 1, 4};
    log.warn("slow backend", {{"backend", fieldlog::Object{{"host", "10.0.0.7"}, {"port", 5432}}},
                              {"sizes", sizes},
                              {"error", std::make_error_code(std::errc::timed_out)}});
    log.info("cache warmed in {} ms", 42);
    FIELDLOG_DEBUG(log, "not written at level info", {{"expensive", path + "?computed"}});

    fieldlog::flush();
    const fieldlog::Metrics m = fieldlog::metrics();
    std::fprintf(stderr, "fieldlog: %llu records, %llu bytes encoded\n",
                 static_cast<unsigned long long>(m.records()), static_cast<unsigned long long>(m.encoded_bytes));
}
