// SPDX-License-Identifier: MIT
// Exceptions as field values: any std::exception writes its type and what(), nested exceptions
// follow as "causes", a std::exception_ptr writes what it holds; in every format.
#include <catch2/catch.hpp>

#include <exception>
#include <stdexcept>
#include <string>
#include <system_error>

#include "support/test_support.hpp"

using fieldlog::Format;

namespace exceptions_test {
struct NotFound : std::runtime_error {
    using std::runtime_error::runtime_error;
};
}  // namespace exceptions_test

namespace {

std::string line_of(fieldlog::Fields fields, Format format = Format::json) {
    auto sink = fieldlog_test::capture(format);
    fieldlog::get("x").error("failed", fields);
    const auto lines = sink->lines();
    REQUIRE(lines.size() == 1);
    return lines[0];
}

std::string json(const std::string& members) {
    return R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"error","logger":"x","msg":"failed")" + members + "}";
}

/// An exception three deep, made with std::throw_with_nested as a program would.
std::exception_ptr chain() {
    try {
        try {
            try {
                throw std::system_error(std::make_error_code(std::errc::connection_refused), "connect");
            } catch (...) {
                std::throw_with_nested(exceptions_test::NotFound("user 42"));
            }
        } catch (...) {
            std::throw_with_nested(std::runtime_error("request failed"));
        }
    } catch (...) {
        return std::current_exception();
    }
    return nullptr;
}

}  // namespace

TEST_CASE("an exception writes its dynamic type and what()", "[exceptions]") {
    const std::runtime_error plain("disk full");
    CHECK(line_of({{"error", plain}}) == json(R"(,"error":{"type":"std::runtime_error","what":"disk full"})"));
    const exceptions_test::NotFound derived("user 7");
    const std::exception& as_base = derived;
    CHECK(line_of({{"error", as_base}}) == json(R"(,"error":{"type":"exceptions_test::NotFound","what":"user 7"})"));
    CHECK(line_of({{"error", std::bad_alloc()}}) == json(R"(,"error":{"type":"std::bad_alloc","what":"std::bad_alloc"})"));
}

TEST_CASE("nested exceptions are written as causes, outermost first", "[exceptions]") {
    const std::exception_ptr p = chain();
    try {
        std::rethrow_exception(p);
    } catch (const std::exception& e) {
        CHECK(line_of({{"error", e}}) ==
              json(R"(,"error":{"type":"std::runtime_error","what":"request failed","causes":[)"
                   R"({"type":"exceptions_test::NotFound","what":"user 42"},)"
                   R"({"type":"std::system_error","what":"connect: Connection refused"}]})"));
    }
    // The same from the exception_ptr.
    CHECK(line_of({{"error", p}}) ==
          json(R"(,"error":{"type":"std::runtime_error","what":"request failed","causes":[)"
               R"({"type":"exceptions_test::NotFound","what":"user 42"},)"
               R"({"type":"std::system_error","what":"connect: Connection refused"}]})"));
}

TEST_CASE("an exception_ptr writes what it holds: null, an exception, or a thrown non-exception", "[exceptions]") {
    CHECK(line_of({{"error", std::exception_ptr()}}) == json(R"(,"error":null)"));
    CHECK(line_of({{"error", std::make_exception_ptr(std::logic_error("bad"))}}) ==
          json(R"(,"error":{"type":"std::logic_error","what":"bad"})"));
    CHECK(line_of({{"error", std::make_exception_ptr(42)}}) == json(R"(,"error":{"type":"int"})"));
    try {
        try {
            throw 7;
        } catch (...) {
            std::throw_with_nested(std::runtime_error("outer"));
        }
    } catch (const std::exception& e) {
        CHECK(line_of({{"error", e}}) ==
              json(R"(,"error":{"type":"std::runtime_error","what":"outer","causes":[{"type":"int"}]})"));
    }
}

TEST_CASE("exceptions are nested JSON in logfmt and console, like any object", "[exceptions]") {
    const std::runtime_error e("disk \"full\"");
    CHECK(line_of({{"error", e}}, Format::logfmt) ==
          "ts=2026-11-30T08:38:11.123456789Z level=error logger=x msg=failed "
          R"(error="{\"type\":\"std::runtime_error\",\"what\":\"disk \\\"full\\\"\"}")");
    CHECK(line_of({{"error", e}}, Format::console).ends_with(R"(error={"type":"std::runtime_error","what":"disk \"full\""})"));
}
