// SPDX-License-Identifier: MIT
// The fieldlog half of the time zone oracle (tz_oracle.py): reads `zone <name>` lines, each
// followed by lines of UTC seconds, and writes each instant as fieldlog does in that zone
// (RFC 3339, whole seconds), one line each; an unknown zone writes `unknown` for its instants.
#include "fieldlog/timestamp.hpp"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

int main() {
    std::ios::sync_with_stdio(false);
    std::optional<fieldlog::TimeZone> zone;
    std::string line;
    std::string out;
    char buf[fieldlog::max_rfc3339_size];
    while (std::getline(std::cin, line)) {
        if (line.rfind("zone ", 0) == 0) {
            try {
                zone = fieldlog::TimeZone::named(line.substr(5));
            } catch (const std::invalid_argument&) {
                zone.reset();
            }
            continue;
        }
        if (!zone) {
            out += "unknown\n";
            continue;
        }
        const fieldlog::Timestamp t{std::stoll(line), 0};
        out.append(buf, fieldlog::append_rfc3339(buf, t, {fieldlog::TimestampPrecision::seconds, *zone}));
        out += '\n';
        if (out.size() > (1 << 16)) {
            std::fwrite(out.data(), 1, out.size(), stdout);
            out.clear();
        }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
