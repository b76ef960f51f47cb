// SPDX-License-Identifier: MIT
// A fmt message followed by fields: the first error says to write fieldlog::format(...).
#include <fieldlog/fieldlog.hpp>

void log_it(const fieldlog::Logger& log, int ms) { log.info("took {} ms", ms, {{"k", 1}}); }
