// SPDX-License-Identifier: MIT
// A hole whose name is not a letter or _ followed by letters, digits, _ or .
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{user-id} seen"_tpl, n); }
