// SPDX-License-Identifier: MIT
// Scope fields follow the same rules as call fields.
#include <fieldlog/fieldlog.hpp>

namespace app {
struct Opaque {
    int x;
};
}  // namespace app

void open_scope() {
    const app::Opaque value{1};
    const fieldlog::Scope scope{{"value", value}};
}
