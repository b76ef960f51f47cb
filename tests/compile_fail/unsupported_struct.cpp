// SPDX-License-Identifier: MIT
// A type fieldlog cannot write (no fieldlog_encode, no fmt::formatter, not a range) as a field.
#include <fieldlog/fieldlog.hpp>

namespace app {
struct Opaque {
    int x;
};
}  // namespace app

void log_it(const fieldlog::Logger& log) {
    const app::Opaque value{1};
    log.info("m", {{"value", value}});
}
