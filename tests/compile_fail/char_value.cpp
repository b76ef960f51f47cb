// SPDX-License-Identifier: MIT
// A char is neither a number nor a string to fieldlog: the message says how to log it.
#include <fieldlog/fieldlog.hpp>

void log_it(const fieldlog::Logger& log, char c) { log.info("m", {{"c", c}}); }
