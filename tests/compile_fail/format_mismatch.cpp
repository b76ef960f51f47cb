// SPDX-License-Identifier: MIT
// fieldlog::format checks the format string against its arguments at compile time.
#include <fieldlog/fieldlog.hpp>

void log_it(const fieldlog::Logger& log) { log.info(fieldlog::format("{:d} requests", "many"), {{"k", 1}}); }
