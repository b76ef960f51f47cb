// SPDX-License-Identifier: MIT
// Field lists kept past the statement that wrote them: a copied Field owns the nested
// Object{...}/Array{...} brace lists it holds (those lists end with their statement), while a
// list made from a span the caller keeps is still referred to. Run under AddressSanitizer in
// CI, where reading a dead brace list is a stack-use-after-scope report, not just garbage.
#include <catch2/catch.hpp>

#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Array;
using fieldlog::Field;
using fieldlog::Object;
using fieldlog_test::capture;

namespace {

const std::string kPrefix = R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":"kept","msg":"m",)";

/// Built in a frame of its own that has returned before the list is logged: every brace list
/// below ended with this return statement.
[[gnu::noinline]] std::vector<Field> kept_fields(int id) {
    return {{"id", id},
            {"user", Object{{"name", "jane"}, {"roles", Array{"admin", Object{{"since", 2019}}}}}},
            {"ids", Array{1, 2, Array{3, Object{{"deep", true}}}}}};
}

constexpr const char* kKeptLine = R"("id":7,"user":{"name":"jane","roles":["admin",{"since":2019}]},)"
                                  R"("ids":[1,2,[3,{"deep":true}]]})";

/// Writes over the stack where the brace lists of kept_fields() stood.
[[gnu::noinline]] void overwrite_stack() {
    volatile char scribble[8192];
    std::memset(const_cast<char*>(scribble), 0x5A, sizeof scribble);
}

std::string logged(std::span<const Field> fields) {
    auto sink = capture();
    fieldlog::get("kept").info("m", fields);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

}  // namespace

TEST_CASE("a kept std::vector<Field> with nested objects and arrays is logged whole after its expression ended",
          "[fields]") {
    const std::vector<Field> kept = kept_fields(7);
    overwrite_stack();
    CHECK(logged(kept) == kPrefix + kKeptLine);
    CHECK(logged(kept) == kPrefix + kKeptLine);  // reused: the list is unchanged by logging
}

TEST_CASE("copies, moves, push_back and assignment of fields each own their nested lists", "[fields]") {
    std::vector<Field> copy;
    {
        const std::vector<Field> original = kept_fields(7);
        copy = original;
    }
    overwrite_stack();
    CHECK(logged(copy) == kPrefix + kKeptLine);

    std::vector<Field> moved = std::move(copy);
    moved.push_back({"later", Object{{"pushed", 1}}});
    moved[0] = Field{"id", Array{Object{{"assigned", 2}}}};
    overwrite_stack();
    CHECK(logged(moved) == kPrefix +
                               R"("id":[{"assigned":2}],"user":{"name":"jane","roles":["admin",{"since":2019}]},)"
                               R"("ids":[1,2,[3,{"deep":true}]],"later":{"pushed":1}})");
}

TEST_CASE("a copied brace list is the copy's own, a span the caller keeps is still referred to", "[fields]") {
    const std::vector<Field> members{{"a", 1}};
    const Field from_span{"o", Object(std::span<const Field>(members))};
    const Field span_copy = from_span;  // NOLINT(performance-unnecessary-copy-initialization): the copy is tested
    CHECK(span_copy.value.as_object().data() == members.data());

    const std::vector<Field> kept = kept_fields(1);
    const std::vector<Field> again = kept;
    CHECK(again[1].value.as_object().data() != kept[1].value.as_object().data());
    REQUIRE(again[1].value.as_object().size() == 2);
    CHECK(again[1].value.as_object()[0].key == "name");
    // Strings are referred to as the original did: the literal's characters, not a copy.
    CHECK(again[1].value.as_object()[0].value.as_string().data() == kept[1].value.as_object()[0].value.as_string().data());

    // A value taken out of a kept field refers to that field's lists; a field made of it too.
    const Field borrowed{"user", kept[1].value};
    CHECK(borrowed.value.as_object().data() == kept[1].value.as_object().data());
}

TEST_CASE("empty nested lists are kept, and a field moved from still logs", "[fields]") {
    std::vector<Field> kept{{"empty", Object{}}, {"none", Array{}}};
    CHECK(logged(kept) == kPrefix + R"("empty":{},"none":[]})");
    const Field taken = std::move(kept[1]);
    CHECK(logged(std::span<const Field>(&taken, 1)) == kPrefix + R"("none":[]})");
    CHECK(fieldlog_test::jsonl_errors({logged(kept)}) == "");
}
