// SPDX-License-Identifier: MIT
// A template with more holes than values.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log) { log.info("{method} {path}"_tpl, "GET"); }
