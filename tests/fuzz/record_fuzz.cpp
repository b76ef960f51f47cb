// SPDX-License-Identifier: MIT
// libFuzzer target for the whole record path: the input makes one record (record_generator.hpp:
// a logger name, a message plain or fmt, bound fields of a child and grandchild logger, up to
// two nested scopes and the call's fields, of every value kind, nested, with repeated and
// reserved keys, and user types that stream random, even unbalanced, begin/end/key/value
// calls), logged to a json, a logfmt, a console (without colour, whatever the environment says)
// and an otel sink.
// Invariants: each sink got exactly one record ending in '\n', on one line but for the
// console's further lines, which start with the indent; the JSON line passes a strict RFC 8259
// check with no repeated member name at any depth, and the logfmt line tokenizes with no
// repeated key; no record carries a raw C0 control but those line breaks, and the console
// record no DEL or C1 control either; the record logged again (also after a record of another
// logger) gives the same JSON line but for ts; the otel line has the data model's members in
// order, its body and scope name are the JSON line's msg and logger, and its attributes are the
// JSON line's members after msg (unless a scope's trace context was lifted out of them);
// the message and the string fields decode to the input with U+FFFD by maximal subpart, under
// the duplicate-key rule (the last of a repeated key wins, reserved keys get "fields.").
// Seeds: tests/fuzz/corpus/record/.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/buffer.hpp"
#include "encode/logfmt_encoder.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fuzz_support.hpp"
#include "record_generator.hpp"

namespace record_fuzz {

/// Keeps the last raw record (with its '\n') and how many arrived.
class LastRecord final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override {
        last.assign(record.bytes.data(), record.bytes.size());
        ++count;
    }
    void flush() override {}
    std::string last;
    int count = 0;
};

bool is_reserved(std::string_view key) { return key == "ts" || key == "level" || key == "logger" || key == "msg"; }

/// The keys a list of fields leaves at the top level under the duplicate-key rule, each with
/// its field, given how a format writes a key.
template <typename KeyText>
std::vector<std::pair<std::string, const fieldlog::Field*>> expected_members(const std::vector<const fieldlog::Field*>& all,
                                                                              KeyText key_text) {
    std::vector<std::pair<std::string, const fieldlog::Field*>> members;
    for (const fieldlog::Field* f : all) {
        std::string key = key_text((is_reserved(f->key) ? "fields." : "") + std::string(f->key));
        std::erase_if(members, [&](const auto& m) { return m.first == key; });
        members.emplace_back(std::move(key), f);
    }
    return members;
}

}  // namespace record_fuzz

using namespace record_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const auto sinks = [] {
        std::array<std::shared_ptr<LastRecord>, 4> made{std::make_shared<LastRecord>(), std::make_shared<LastRecord>(),
                                                         std::make_shared<LastRecord>(), std::make_shared<LastRecord>()};
        fieldlog::configure({.level = fieldlog::Level::trace,
                             .sinks = {{.target = made[0], .format = fieldlog::Format::json},
                                       {.target = made[1], .format = fieldlog::Format::logfmt},
                                       {.target = made[2],
                                        .format = fieldlog::Format::console,
                                        .colour = fieldlog::ColourMode::never},
                                       {.target = made[3], .format = fieldlog::Format::otel}}});
        return made;
    }();
    static const std::vector<fieldlog::Logger> loggers = record_generator::record_loggers();

    fuzz::Reader in(data, size);
    const record_generator::Record record(in, loggers);
    const fieldlog::Logger& base = record.base;

    for (const auto& sink : sinks) sink->count = 0;
    record.log(record.child);
    const std::string expected_message = record.use_format ? fuzz::replaced(record.message) + "|" + std::to_string(record.number)
                                                         : fuzz::replaced(record.message);

    for (std::size_t s = 0; s < sinks.size(); ++s) {
        const auto& sink = sinks[s];
        if (sink->count != 1) fuzz::fail("a sink did not get exactly one record", sink->last);
        const std::string_view line = sink->last;
        if (line.empty() || line.back() != '\n') fuzz::fail("a record does not end its line", line);
        // The console record continues on lines after the indent (a multi-line message or
        // string value); the others are one line.
        const bool console = s == 2;
        for (std::size_t at = line.find('\n'); at + 1 < line.size(); at = line.find('\n', at + 1)) {
            if (!console || line.substr(at + 1, 4) != "    ") fuzz::fail("a record's line does not continue it", line);
        }
        if (!fuzz::valid_utf8(line)) fuzz::fail("a record is not UTF-8", line);
        for (const std::uint32_t cp : fuzz::code_points(line.substr(0, line.size() - 1))) {
            // DEL is legal in JSON and logfmt strings (RFC 8259 escapes only C0); console escapes it.
            if (cp < 0x20 && !(console && cp == '\n')) fuzz::fail("a raw control character in a record", line);
        }
    }

    // Every field in writing order: bound (parent, child), scopes (outer, inner), call.
    std::vector<const fieldlog::Field*> all;
    for (const auto* list : {&record.bound_parent, &record.bound_child, &record.outer_scope, &record.inner_scope, &record.call}) {
        for (const fieldlog::Field& f : *list) all.push_back(&f);
    }
    const bool model = !record.build.top_level_script && !record.scope_dropped;

    const std::string_view json_line = std::string_view(sinks[0]->last).substr(0, sinks[0]->last.size() - 1);
    const auto members = fuzz::JsonParser(json_line).top_object();
    if (members.size() < 4 || members[0].key != "ts" || members[1].key != "level" || members[2].key != "logger" ||
        members[3].key != "msg") {
        fuzz::fail("JSON line does not start with ts, level, logger, msg", json_line);
    }
    if (members[3].string_value != expected_message) fuzz::fail("msg does not round-trip", json_line);
    if (members[2].string_value != fuzz::replaced(base.name())) fuzz::fail("logger does not round-trip", json_line);
    if (model) {
        const auto expected = expected_members(all, [](const std::string& k) { return fuzz::replaced(k); });
        if (expected.size() != members.size() - 4) fuzz::fail("JSON members differ from the duplicate-key rule", json_line);
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const auto& [key, field] = expected[i];
            const auto& got = members[i + 4];
            if (got.key != key) fuzz::fail("JSON member order or name differs", json_line);
            if (field->value.kind() == fieldlog::Value::Kind::string &&
                got.string_value != fuzz::replaced(field->value.as_string())) {
                fuzz::fail("a string field does not round-trip", json_line);
            }
        }
    }

    // otel: the same record in the data model's names, its attributes the JSON line's members.
    const std::string_view otel_line = std::string_view(sinks[3]->last).substr(0, sinks[3]->last.size() - 1);
    const auto otel = fuzz::JsonParser(otel_line).top_object();
    static constexpr std::string_view kOtelHead[] = {"timestamp", "observed_timestamp", "severity_text", "severity_number", "body"};
    static constexpr std::string_view kOtelTail[] = {"attributes", "resource", "instrumentation_scope"};
    if (otel.size() < std::size(kOtelHead) + std::size(kOtelTail)) fuzz::fail("otel line lacks members", otel_line);
    const std::size_t lifted = otel.size() - std::size(kOtelHead) - std::size(kOtelTail);
    for (std::size_t i = 0; i < std::size(kOtelHead); ++i) {
        if (otel[i].key != kOtelHead[i]) fuzz::fail("otel line does not start with the data model's members", otel_line);
    }
    for (std::size_t i = 0; i < lifted; ++i) {
        const std::string& key = otel[std::size(kOtelHead) + i].key;
        if (key != "trace_id" && key != "span_id" && key != "trace_flags") fuzz::fail("otel top-level member out of place", otel_line);
    }
    for (std::size_t i = 0; i < std::size(kOtelTail); ++i) {
        if (otel[std::size(kOtelHead) + lifted + i].key != kOtelTail[i]) fuzz::fail("otel line does not end in attributes, resource, scope", otel_line);
    }
    if (otel[0].raw_value != otel[1].raw_value || otel[2].string_value != "info" || otel[3].raw_value != "9") {
        fuzz::fail("otel timestamps or severity differ from the record's", otel_line);
    }
    if (otel[4].string_value != expected_message) fuzz::fail("otel body does not round-trip", otel_line);
    if (otel.back().raw_value != "{\"name\":" + members[2].raw_value + "}") fuzz::fail("otel scope name is not the logger", otel_line);
    if (lifted == 0) {
        const std::string head = "{\"ts\":" + members[0].raw_value + ",\"level\":" + members[1].raw_value +
                                 ",\"logger\":" + members[2].raw_value + ",\"msg\":" + members[3].raw_value;
        if (json_line.substr(0, head.size()) != head) fuzz::fail("JSON line head is not its members", json_line);
        const std::string_view rest = json_line.substr(head.size(), json_line.size() - head.size() - 1);
        const std::string attributes = rest.empty() ? "{}" : "{" + std::string(rest.substr(1)) + "}";
        if (otel[otel.size() - 3].raw_value != attributes) fuzz::fail("otel attributes are not the JSON line's members", otel_line);
    }

    const std::string_view logfmt_line = std::string_view(sinks[1]->last).substr(0, sinks[1]->last.size() - 1);
    const auto pairs = fuzz::logfmt_pairs(logfmt_line);
    if (pairs.size() < 4 || pairs[3].first != "msg" || pairs[3].second != expected_message) {
        fuzz::fail("logfmt msg does not round-trip", logfmt_line);
    }
    if (model) {
        fieldlog::detail::Buffer key_buffer;
        const auto expected = expected_members(all, [&](const std::string& k) {
            key_buffer.clear();
            fieldlog::detail::append_logfmt_key(key_buffer, k);
            return std::string(key_buffer.view());
        });
        if (expected.size() != pairs.size() - 4) fuzz::fail("logfmt pairs differ from the duplicate-key rule", logfmt_line);
        for (std::size_t i = 0; i < expected.size(); ++i) {
            const auto& [key, field] = expected[i];
            if (pairs[i + 4].first != key) fuzz::fail("logfmt key order or name differs", logfmt_line);
            if (field->value.kind() == fieldlog::Value::Kind::string &&
                pairs[i + 4].second != fuzz::replaced(field->value.as_string())) {
                fuzz::fail("a logfmt string field does not round-trip", logfmt_line);
            }
        }
    }

    const std::string_view console_line = sinks[2]->last;
    for (const std::uint32_t cp : fuzz::code_points(console_line)) {
        if (cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) fuzz::fail("DEL or a C1 control in a console line", console_line);
    }

    // The same record again, from the context nodes' cached encodings, then after a record of
    // the base logger, long or short: the same JSON line but ts.
    const auto after_ts = [](std::string_view line) { return std::string(line.substr(line.find(",\"level\":"))); };
    const std::string first = after_ts(sinks[0]->last);
    record.log(record.child);
    if (after_ts(sinks[0]->last) != first) fuzz::fail("a second record of the same logger differs", sinks[0]->last);
    const std::string padding(static_cast<std::size_t>(in.byte()) * 8, 'p');  // up to ~2 KB
    const fieldlog::Field base_fields[] = {{"pad", padding}};
    base.log(fieldlog::Level::info, record.message, base_fields);
    record.log(record.child);
    if (after_ts(sinks[0]->last) != first) fuzz::fail("a record after another logger's differs", sinks[0]->last);
    return 0;
}
