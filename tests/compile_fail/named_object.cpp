// SPDX-License-Identifier: MIT
// A named Object points at a brace list that ended with its own line: refused as a value.
#include <fieldlog/fieldlog.hpp>

void log_it(const fieldlog::Logger& log) {
    const fieldlog::Object user{{"id", 7}};
    log.info("m", {{"user", user}});
}
