// SPDX-License-Identifier: MIT
// fieldlog's side of otel_records_crosscheck.py: writes one record of the otel format to stdout
// for each "traceparent TAB logger TAB seconds TAB nanoseconds" line on stdin, at that time,
// inside a Scope of the parsed traceparent (none when it is empty or invalid), with the call
// facts on. The resource comes from the arguments, each `TYPE:key=value` with TYPE s (string),
// i (integer), d (float) or b (true/false).
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fieldlog/fieldlog.hpp>

namespace {

fieldlog::Timestamp g_now{};
fieldlog::Timestamp now() noexcept { return g_now; }

fieldlog::ResourceAttribute attribute_of(const std::string& argument) {
    const std::size_t equals = argument.find('=');
    if (argument.size() < 3 || argument[1] != ':' || equals == std::string::npos) {
        throw std::invalid_argument("expected TYPE:key=value, got " + argument);
    }
    std::string key = argument.substr(2, equals - 2);
    const std::string value = argument.substr(equals + 1);
    switch (argument[0]) {
        case 's': return {std::move(key), value};
        case 'i': return {std::move(key), std::int64_t{std::stoll(value)}};
        case 'd': return {std::move(key), std::stod(value)};
        case 'b': return {std::move(key), value == "true"};
        default: throw std::invalid_argument("unknown type in " + argument);
    }
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
        parts.push_back(line.substr(start, tab - start));
        start = tab + 1;
    }
    parts.push_back(line.substr(start));
    return parts;
}

}  // namespace

int main(int argc, char** argv) {
    fieldlog::Config config{.level = fieldlog::Level::trace,
                            .format = fieldlog::Format::otel,
                            .caller = fieldlog::Caller::with_function,
                            .tid = true,
                            .clock = &now};
    for (int i = 1; i < argc; ++i) config.resource.push_back(attribute_of(argv[i]));
    fieldlog::configure(config);
    std::string line;
    while (std::getline(std::cin, line)) {
        const std::vector<std::string> parts = split_tabs(line);
        if (parts.size() != 4) {
            std::cerr << "fieldlog_otel_record_peer: expected traceparent TAB logger TAB seconds TAB nanoseconds\n";
            return 2;
        }
        g_now = fieldlog::Timestamp(std::stoll(parts[2]), static_cast<std::uint32_t>(std::stoul(parts[3])));
        const fieldlog::Scope trace{fieldlog::TraceContext::parse(parts[0])};
        fieldlog::get(parts[1]).info("record", {{"n", 1}});
        fieldlog::flush();
    }
    return 0;
}
