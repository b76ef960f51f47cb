// SPDX-License-Identifier: MIT
// libFuzzer target for redaction (Config::redact) and the value cap (max_value_bytes): the
// input makes one record (record_generator.hpp) that carries a marker value under every key
// the rules name, at any depth — call, bound and scope fields, nested objects and arrays, maps,
// user types streaming it or hiding it under a secret key of their own — logged to a json, a
// logfmt, a console and an otel sink and the typed observer, with a small value cap.
// Invariants: the marker appears in no byte any sink got and in no value the observer kept;
// every line is UTF-8 (the cap cuts between sequences); and the glob agrees with a plain
// recursive matcher on a pattern and key made from the input's first bytes.
// Seeds: tests/fuzz/corpus/redact/ (the record fuzzer's seeds read as well).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "encode/redact.hpp"
#include "fieldlog/fieldlog.hpp"
#include "fieldlog/testing/observer.hpp"
#include "fuzz_support.hpp"
#include "record_generator.hpp"

namespace redact_fuzz {

/// No input string keeps it (record_generator breaks any it spells), and it has bytes base64
/// does not write, so only a value the rules missed can put it into a line.
constexpr std::string_view kMarker = "#SeCrEt-MaRkEr!#";

const std::vector<std::string> kRules{"password", "authorization", "*token*", "*SECRET*"};

/// Every byte every record brought.
class AllBytes final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override { bytes.append(record.bytes.data(), record.bytes.size()); }
    void flush() override {}
    std::string bytes;
};

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// The glob as its definition says it, by recursion: the reference the library's must equal.
bool reference_glob(std::string_view pattern, std::string_view key) {
    if (pattern.empty()) return key.empty();
    if (pattern[0] == '*') {
        for (std::size_t i = 0; i <= key.size(); ++i) {
            if (reference_glob(pattern.substr(1), key.substr(i))) return true;
        }
        return false;
    }
    return !key.empty() && lower(pattern[0]) == lower(key[0]) && reference_glob(pattern.substr(1), key.substr(1));
}

bool reference_names(std::string_view key) {
    for (const std::string& rule : kRules) {
        if (reference_glob(rule, key)) return true;
    }
    return false;
}

/// A short pattern and key from the input, over a small alphabet so that they often match.
void check_glob(fuzz::Reader& in) {
    static constexpr char alphabet[] = {'*', 'a', 'A', 'b', 'B', '*', '\xC3', 'z'};
    const auto text = [&](std::size_t max) {
        std::string out;
        const std::size_t n = in.byte() % (max + 1);
        for (std::size_t i = 0; i < n; ++i) out.push_back(alphabet[in.byte() % sizeof alphabet]);
        return out;
    };
    const std::string pattern = text(8);
    const std::string key = text(14);
    if (fieldlog::detail::glob_matches(pattern, key) != reference_glob(pattern, key)) {
        fuzz::fail("the glob differs from its definition", pattern + " | " + key);
    }
}

}  // namespace redact_fuzz

using namespace redact_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    struct Outputs {
        std::vector<std::shared_ptr<AllBytes>> lines;
        std::shared_ptr<fieldlog::testing::Observer> observer = std::make_shared<fieldlog::testing::Observer>();
    };
    static const Outputs outputs = [] {
        Outputs made;
        fieldlog::Config config{.level = fieldlog::Level::trace, .redact = kRules, .max_value_bytes = 24};
        for (const fieldlog::Format format :
             {fieldlog::Format::json, fieldlog::Format::logfmt, fieldlog::Format::console, fieldlog::Format::otel}) {
            made.lines.push_back(std::make_shared<AllBytes>());
            config.sinks.push_back({.target = made.lines.back(), .format = format, .colour = fieldlog::ColourMode::never});
        }
        config.sinks.push_back({.target = made.observer});
        fieldlog::configure(config);
        return made;
    }();
    static const std::vector<fieldlog::Logger> loggers = record_generator::record_loggers();
    static const record_generator::Secrets secrets{&reference_names, std::string(kMarker)};

    fuzz::Reader in(data, size);
    check_glob(in);
    for (const auto& sink : outputs.lines) sink->bytes.clear();
    outputs.observer->clear();
    {
        const record_generator::Record record(in, loggers, &secrets);
        if (record.message.find(kMarker) != std::string::npos) return 0;  // the input wrote it itself
        record.log(record.child);
        const fieldlog::Field after_it[] = {{"n", 1}};
        record.child.log(fieldlog::Level::info, "again", after_it);  // from the cached encodings
    }
    for (const auto& sink : outputs.lines) {
        if (sink->bytes.find(kMarker) != std::string::npos) fuzz::fail("a secret reached a sink", sink->bytes);
        if (!fuzz::valid_utf8(sink->bytes)) fuzz::fail("a line is not UTF-8", sink->bytes);
    }
    for (const auto& observed : outputs.observer->take_all()) {
        for (const auto& member : observed.fields) {
            const std::string text = member.value.to_string();
            if (text.find(kMarker) != std::string::npos) fuzz::fail("a secret reached the observer", member.key + "=" + text);
        }
    }
    return 0;
}
