// SPDX-License-Identifier: MIT
// copy_record: a record's owned copy reads as the record did after everything the record
// referred to is gone; a user type's encoding runs once, when the copy is made.
#include <catch2/catch.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fieldlog/owned_record.hpp"
#include "fieldlog/testing/observer.hpp"

using fieldlog::Field;
using fieldlog::copy_record;
using fieldlog::OwnedRecord;
using fieldlog::RecordView;
using fieldlog::testing::ObservedMember;
using fieldlog::testing::ObservedValue;

namespace owned_record_test {

struct Counted {
    int* encodes;
    int value;
};
void fieldlog_encode(fieldlog::ValueEncoder& enc, const Counted& c) {
    ++*c.encodes;
    enc.value(fieldlog::Object{{"value", c.value}});
}

struct Throwing {};
void fieldlog_encode(fieldlog::ValueEncoder&, const Throwing&) { throw std::runtime_error("no encoding"); }

}  // namespace owned_record_test

using owned_record_test::Counted;
using owned_record_test::Throwing;

TEST_CASE("a record's copy reads as the record did once the record's own memory is gone", "[owned_record]") {
    int encodes = 0;
    std::shared_ptr<const OwnedRecord> copy;
    {
        auto logger = std::make_unique<std::string>("db.pool");
        auto id = std::make_unique<std::string>("req-7f3a");
        auto key = std::make_unique<std::string>("user");
        const int ms = 5;
        const auto args = fmt::make_format_args(ms);
        const fieldlog::Message message(fmt::string_view("took {} ms"), args);
        const std::vector<Field> bound{{"service", "api"}};
        const std::vector<Field> scope{{"request_id", *id}};
        const Counted counted{&encodes, 3};  // a Field refers to a user type's value, as a call does
        const std::vector<Field> fields{{*key, counted}, {"rows", 12}};
        const RecordView view{.level = fieldlog::Level::warn,
                              .time = fieldlog::Timestamp{1700000000, 123456789},
                              .logger = *logger,
                              .message = &message,
                              .bound = bound,
                              .scope = scope,
                              .fields = fields,
                              .thread_id = 4242};
        copy = copy_record(view);
        CHECK(encodes == 1);
        // Overwrite what the record referred to before freeing it.
        logger->assign(logger->size(), 'x');
        id->assign(id->size(), 'x');
        key->assign(key->size(), 'x');
    }
    const RecordView read = view_of(*copy);
    CHECK(read.level == fieldlog::Level::warn);
    CHECK(read.time.seconds == 1700000000);
    CHECK(read.time.nanos == 123456789);
    CHECK(read.logger == "db.pool");
    CHECK(read.bytes.empty());
    REQUIRE(read.message != nullptr);
    CHECK_FALSE(read.message->formatted());
    CHECK(read.message->text() == "took 5 ms");
    CHECK(read.options == nullptr);
    CHECK(read.thread_id == 4242);
    REQUIRE(read.bound.size() == 1);
    REQUIRE(read.scope.size() == 1);
    REQUIRE(read.fields.size() == 2);
    CHECK(read.bound[0].key == "service");
    CHECK(ObservedValue::of(read.bound[0].value) == "api");
    CHECK(read.scope[0].key == "request_id");
    CHECK(ObservedValue::of(read.scope[0].value) == "req-7f3a");
    CHECK(read.fields[0].key == "user");
    CHECK(read.fields[1].key == "rows");
    CHECK(ObservedValue::of(read.fields[1].value) == 12);
    // The user type replays what it recorded, as often as it is read, without running again.
    const ObservedValue expected(std::vector<ObservedMember>{{"value", 3}});
    CHECK(ObservedValue::of(read.fields[0].value) == expected);
    CHECK(ObservedValue::of(view_of(*copy).fields[0].value) == expected);
    CHECK(encodes == 1);
}

TEST_CASE("a record's copy of no fields and an empty message", "[owned_record]") {
    const fieldlog::Message message("");
    const auto copy = copy_record(RecordView{.logger = "", .message = &message});
    const RecordView read = view_of(*copy);
    CHECK(read.message->text().empty());
    CHECK(read.logger.empty());
    CHECK(read.bound.empty());
    CHECK(read.scope.empty());
    CHECK(read.fields.empty());
}

TEST_CASE("a user type that throws while a record is copied: the copy throws it", "[owned_record]") {
    const fieldlog::Message message("boom");
    const Throwing throwing;
    const std::vector<Field> fields{{"bad", throwing}};
    CHECK_THROWS_WITH(copy_record(RecordView{.logger = "x", .message = &message, .fields = fields}),
                      "no encoding");
}

TEST_CASE("a line's view cannot be copied as parts: the copy says so", "[owned_record]") {
    const char line[] = "{\"msg\":\"x\"}\n";
    CHECK_THROWS_WITH(copy_record(RecordView{.bytes = {line, sizeof line - 1}, .logger = "x"}),
                      Catch::Contains("holds a line"));
}
