// SPDX-License-Identifier: MIT
// A brace of the text without its partner.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{n} seen }"_tpl, n); }
