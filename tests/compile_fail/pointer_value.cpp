// SPDX-License-Identifier: MIT
// A pointer must not silently become a bool.
#include <fieldlog/fieldlog.hpp>

void log_it(const fieldlog::Logger& log, const int* p) { log.info("m", {{"p", p}}); }
