// SPDX-License-Identifier: MIT
// A hole named as a key the record writes itself.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{msg} seen"_tpl, n); }
