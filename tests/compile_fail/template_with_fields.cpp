// SPDX-License-Identifier: MIT
// A template's values followed by fields: the first error says to write fieldlog::format(...).
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{n} seen"_tpl, n, {{"k", 1}}); }
