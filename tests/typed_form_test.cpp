// SPDX-License-Identifier: MIT
// The async writer's lines from the records' typed copies against the caller's, over the record
// fuzzer's generator (fuzz/record_generator.hpp): every seed of the record fuzzer and inputs of a
// fixed-seed PRNG make records of every value kind, nested, with repeated and reserved keys,
// bound and scope fields and user types streaming unbalanced calls. Each is logged once
// synchronously and once in async mode to a json, a logfmt, a console (no colour) and an otel
// sink, and each format's line must be byte-identical. In async mode each record's parts (its
// values, its child logger, its scopes) are freed right after the call, before the writer
// encodes its copy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/record_generator.hpp"
#include "support/test_support.hpp"

namespace {

// These and the seeds take well under a second, also under AddressSanitizer: no build runs fewer.
constexpr std::size_t kRandomInputs = 2000;

struct Input {
    std::string name;  // which seed, or which random input
    std::vector<std::uint8_t> bytes;
};

/// The record fuzzer's seeds (FIELDLOG_RECORD_CORPUS, set in tests/CMakeLists.txt), by name.
std::vector<Input> corpus_inputs() {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(FIELDLOG_RECORD_CORPUS)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<Input> inputs;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        inputs.push_back({"seed " + file.filename().string(),
                          {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}});
    }
    return inputs;
}

/// Inputs of up to 512 random bytes, the same ones every run.
std::vector<Input> random_inputs(std::size_t count) {
    std::mt19937_64 random(18);
    std::uniform_int_distribution<std::size_t> length(0, 512);
    std::uniform_int_distribution<unsigned> byte(0, 255);
    std::vector<Input> inputs(count);
    for (std::size_t i = 0; i < count; ++i) {
        inputs[i].name = "random input " + std::to_string(i);
        inputs[i].bytes.resize(length(random));
        for (std::uint8_t& b : inputs[i].bytes) b = static_cast<std::uint8_t>(byte(random));
    }
    return inputs;
}

std::string hex(const std::vector<std::uint8_t>& bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const std::uint8_t b : bytes) {
        out += digits[b >> 4];
        out += digits[b & 0xF];
    }
    return out;
}

/// Keeps each input's records, whole: a trace record ends an input (the generator logs at info).
class RecordsPerInput final : public fieldlog::Sink {
public:
    void write(const fieldlog::RecordView& record) override {
        if (record.level == fieldlog::Level::trace) {
            inputs_.push_back(std::move(current_));
            current_.clear();
        } else {
            current_.emplace_back(record.bytes.data(), record.bytes.size());
        }
    }
    void flush() override {}
    [[nodiscard]] std::vector<std::vector<std::string>> inputs() const {
        const std::lock_guard lock(mutex());
        return inputs_;
    }

private:
    std::vector<std::string> current_;
    std::vector<std::vector<std::string>> inputs_;
};

constexpr std::array kFormats{fieldlog::Format::json, fieldlog::Format::logfmt, fieldlog::Format::console,
                              fieldlog::Format::otel};
constexpr std::array kFormatNames{"json", "logfmt", "console", "otel"};

/// For each format, each input's records: the generator's record of every input, logged at the
/// fixed clock, synchronously or in async mode (read after a flush()).
std::array<std::vector<std::vector<std::string>>, kFormats.size()> records_of(const std::vector<Input>& inputs, bool async) {
    std::array<std::shared_ptr<RecordsPerInput>, kFormats.size()> sinks;
    fieldlog::Config config{.level = fieldlog::Level::trace, .async = {.enabled = async}, .clock = &fieldlog_test::fixed_clock};
    for (std::size_t f = 0; f < kFormats.size(); ++f) {
        sinks[f] = std::make_shared<RecordsPerInput>();
        config.sinks.push_back({.target = sinks[f], .format = kFormats[f], .colour = fieldlog::ColourMode::never});
    }
    fieldlog::configure(config);
    const std::vector<fieldlog::Logger> loggers = record_generator::record_loggers();
    const fieldlog::Logger separator = fieldlog::get("typed_form_test");
    for (const Input& input : inputs) {
        {
            fuzz::Reader in(input.bytes.data(), input.bytes.size());
            const record_generator::Record record(in, loggers);
            record.log(record.child);
        }  // scopes closed, child logger and values freed: in async mode the writer has only the copy
        separator.trace("end of input");
    }
    fieldlog::flush();
    std::array<std::vector<std::vector<std::string>>, kFormats.size()> records;
    for (std::size_t f = 0; f < kFormats.size(); ++f) records[f] = sinks[f]->inputs();
    fieldlog_test::release_sinks();
    return records;
}

}  // namespace

TEST_CASE("the async writer's lines from the typed copies of the record fuzzer's records equal the caller's, in every format",
          "[formats][async]") {
    std::vector<Input> inputs = corpus_inputs();
    REQUIRE(!inputs.empty());
    for (Input& input : random_inputs(kRandomInputs)) inputs.push_back(std::move(input));

    const auto direct = records_of(inputs, false);
    const auto queued = records_of(inputs, true);
    // One bug in the typed copy can fail many inputs: the first few are shown, all are counted.
    constexpr std::size_t kShown = 10;
    std::size_t mismatches = 0;  // (format, input) pairs
    for (std::size_t f = 0; f < kFormats.size(); ++f) {
        INFO("format " << kFormatNames[f]);
        REQUIRE(direct[f].size() == inputs.size());
        REQUIRE(queued[f].size() == inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            if (direct[f][i].size() == 1 && queued[f][i] == direct[f][i]) continue;
            if (++mismatches > kShown) continue;
            INFO(inputs[i].name << ", hex: " << hex(inputs[i].bytes));
            CHECK(direct[f][i].size() == 1);
            CHECK(queued[f][i].size() == 1);
            CHECK(queued[f][i] == direct[f][i]);
        }
    }
    CHECK(mismatches == 0);
}
