// SPDX-License-Identifier: MIT
// A hole's spec that does not fit its value: fmt's check.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{n:.1f} seen"_tpl, n); }
