// SPDX-License-Identifier: MIT
// A scoped enum has no value fieldlog could write without being told.
#include <fieldlog/fieldlog.hpp>

enum class Colour { red, green };

void log_it(const fieldlog::Logger& log) { log.info("m", {{"colour", Colour::green}}); }
