// SPDX-License-Identifier: MIT
// A container is written as an array only when its elements can be written.
#include <vector>

#include <fieldlog/fieldlog.hpp>

namespace app {
struct Opaque {
    int x;
};
}  // namespace app

void log_it(const fieldlog::Logger& log, const std::vector<app::Opaque>& values) {
    log.info("m", {{"values", values}});
}
