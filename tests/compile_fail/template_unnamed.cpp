// SPDX-License-Identifier: MIT
// A positional hole in a template.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{} seen"_tpl, n); }
