// SPDX-License-Identifier: MIT
// A hole's spec asking a width over 64: a rendered hole keeps a known bound.
#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log, int n) { log.info("{n:>100} seen"_tpl, n); }
