// SPDX-License-Identifier: MIT
// A hole named twice.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{n} and {n}"_tpl, n, n); }
