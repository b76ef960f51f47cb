// SPDX-License-Identifier: MIT
// A spec on a value that is not a number or a string.
#include <chrono>

#include <fieldlog/fieldlog.hpp>

using namespace fieldlog::literals;

void log_it(const fieldlog::Logger& log) { log.info("took {wait:>8}"_tpl, std::chrono::seconds(1)); }
