// SPDX-License-Identifier: MIT
// The control case: every supported kind of value compiles (so the failures above are real).
#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <fieldlog/fieldlog.hpp>

namespace app {
struct User {
    std::string name;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const User& u) { enc.value(fieldlog::Object{{"name", u.name}}); }
struct Point {
    int x;
};
}  // namespace app

template <>
struct fmt::formatter<app::Point> {
    constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
    template <typename Context>
    auto format(const app::Point& p, Context& ctx) const {
        return fmt::format_to(ctx.out(), "({})", p.x);
    }
};

void log_it(const fieldlog::Logger& log, const std::string& s, char* mutable_text) {
    using namespace std::chrono_literals;
    const app::User user{"jane"};
    const std::vector<app::User> users{user};
    const std::map<std::string, int> counts{{"a", 1}};
    const std::optional<app::User> maybe = user;
    const std::array<std::byte, 2> raw{};
    const std::error_code ec;
    log.info(fieldlog::format("{} users", users.size()),
             {{"user", user}, {"users", users}, {"point", app::Point{1}}, {"counts", counts}, {"maybe", maybe},
              {"s", s}, {"text", mutable_text}, {"literal", "x"}, {"i", 1}, {"u", 2u}, {"d", 1.5}, {"b", true},
              {"null", nullptr}, {"dur", 5ms}, {"when", std::chrono::system_clock::now()}, {"ec", ec},
              {"bytes", fieldlog::Bytes{raw}}, {"obj", fieldlog::Object{{"k", 1}}}, {"c", int('c')}});
    const fieldlog::Scope scope{{"user", user}, {"counts", counts}};
    // Kept lists: nested brace lists are copied into the vector; a span the caller keeps is referred to.
    const std::vector<fieldlog::Field> kept{{"obj", fieldlog::Object{{"k", 1}}}, {"arr", fieldlog::Array{1, "x"}}};
    log.info("kept", kept);
    log.info("span", {{"obj", fieldlog::Object(std::span<const fieldlog::Field>(kept))}});
    // Templates: any loggable value in a hole, a spec on a number or a string, fields after.
    using namespace fieldlog::literals;
    log.info("{user} of {users} at {point} took {dur} {d:.2f} {s:>8} {{braces}}"_tpl, user, users, app::Point{1}, 5ms,
             1.5, s);
    log.info(fieldlog::format("{user} logged in"_tpl, user), {{"ip", "10.0.0.1"}});
    FIELDLOG_INFO(log, "from a macro: {n}"_tpl, 1);
    FIELDLOG_WARN_EVERY_N(log, 10, "rate-limited: {n}"_tpl, 1);
}
