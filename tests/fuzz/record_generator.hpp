// SPDX-License-Identifier: MIT
// The record fuzzer's generator: one record read from an input's bytes, with a logger name, a
// message (plain or fmt), bound fields of a child (and grandchild) logger, up to two nested
// scopes and the call's fields, of every value kind, nested, with repeated and reserved keys,
// and user types that stream random (even unbalanced) begin/end/key/value calls.
// record_fuzz.cpp checks each format's invariants on it; typed_form_test.cpp logs the same
// records synchronously and async and compares the lines; redact_fuzz.cpp has it plant a
// secret under every key its rules name (Secrets). The record depends on the bytes alone, so
// the same input makes the same record every time.
#pragma once

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "fieldlog/fieldlog.hpp"
#include "fuzz_support.hpp"

namespace record_generator {

using fuzz::Reader;

/// A user type whose fieldlog_encode replays a script of encoder calls.
struct Script {
    std::string ops;
};

inline void fieldlog_encode(fieldlog::ValueEncoder& enc, const Script& script) {
    static constexpr std::string_view keys[] = {"a", "b", "a", "msg", "x y", ""};
    const std::string& ops = script.ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto op = static_cast<unsigned char>(ops[i]);
        switch (op % 9) {
            case 0: enc.begin_object(); break;
            case 1: enc.end_object(); break;
            case 2: enc.begin_array(); break;
            case 3: enc.end_array(); break;
            case 4: enc.key(keys[(op / 9) % std::size(keys)]); break;
            case 5: enc.value(static_cast<int>(op)); break;
            case 6: enc.value(std::string_view(ops).substr(i, 3)); break;
            case 7: enc.formatted("<{}>", fmt::make_format_args(op)); break;
            case 8: enc.value(Script{ops.substr(i + 1, ops.size() / 2)}); break;  // strictly shorter
        }
    }
}

/// What redact_fuzz.cpp has a record carry: under every key `names` says is secret, at any
/// depth, a value holding `marker` (a string, a container, a user type), and user types and
/// maps that hide it under such a key inside; every other string is kept free of it.
struct Secrets {
    std::function<bool(std::string_view)> names;
    std::string marker;
};

/// A user type that writes a secret: `mode` 0 and 1 the marker itself (as a value, through
/// fmt), 2 and 3 containers holding it under `key`, which is secret.
struct SecretScript {
    std::string_view marker;
    std::string_view key;
    int mode;
};

inline void fieldlog_encode(fieldlog::ValueEncoder& enc, const SecretScript& s) {
    switch (s.mode % 4) {
        case 0: enc.value(s.marker); break;
        case 1: enc.formatted("{}", fmt::make_format_args(s.marker)); break;
        case 2:
            enc.begin_object();
            enc.key("plain");
            enc.value(1);
            enc.key(s.key);
            enc.value(s.marker);
            enc.end_object();
            break;
        default:
            enc.begin_array();
            enc.begin_object();
            enc.key(s.key);
            enc.begin_array();
            enc.value(s.marker);
            enc.end_array();
            enc.end_object();
            enc.end_array();
    }
}

/// Builds fields from the input; owns everything they refer to.
class Builder {
public:
    explicit Builder(Reader& in, const Secrets* secrets = nullptr) : in_(in), secrets_(secrets) {}

    std::vector<fieldlog::Field> fields(int max, int depth) {
        std::vector<fieldlog::Field> out;
        const int n = in_.byte() % (max + 1);
        for (int i = 0; i < n; ++i) {
            const std::string_view k = key();
            if (secrets_ != nullptr && secrets_->names(k)) {
                out.push_back({k, secret_value(depth)});
            } else {
                out.push_back({k, value(depth)});
            }
        }
        return out;
    }
    /// True when a top-level value was a user type (it may add top-level members itself).
    bool top_level_script = false;

private:
    /// Keys a Secrets rule set names (redact_fuzz.cpp's rules take each of them).
    static constexpr std::string_view kSecretKeys[] = {"password", "Authorization", "api_TOKEN", "x-Secret-y", "tokens"};

    std::string_view keep(std::string_view s) {
        std::string& kept = *strings_.emplace_back(std::make_unique<std::string>(s));
        if (secrets_ != nullptr) {  // a string of the input's may spell the marker: break it
            for (std::size_t at = kept.find(secrets_->marker); at != std::string::npos; at = kept.find(secrets_->marker)) {
                kept[at] = '_';
            }
        }
        return kept;
    }

    std::string_view key() {
        static constexpr std::string_view dictionary[] = {
            "a", "b", "ts", "level", "logger", "msg", "fields.msg", "k", "key with space", "k=v", "", "\xFF", "\xC3",
        };
        const std::uint8_t pick = in_.byte();
        if (pick < 200) return dictionary[pick % std::size(dictionary)];
        if (secrets_ != nullptr && pick < 228) return kSecretKeys[pick % std::size(kSecretKeys)];
        return keep(in_.bytes(12));
    }

    /// A value holding the marker, for a secret key.
    fieldlog::Value secret_value(int depth) {
        const std::string_view marker = secrets_->marker;
        const std::uint8_t pick = in_.byte();
        switch (pick % 5) {
            case 0: return marker;
            case 1: {
                auto& children = *objects_.emplace_back(std::make_unique<std::vector<fieldlog::Field>>(fields(3, depth + 1)));
                children.push_back({"inner", marker});
                return fieldlog::Object(std::span<const fieldlog::Field>(children));
            }
            case 2: {
                auto& elements = *arrays_.emplace_back(std::make_unique<std::vector<fieldlog::Value>>());
                elements.push_back(marker);
                elements.push_back(value(depth + 1));
                return fieldlog::Array(std::span<const fieldlog::Value>(elements));
            }
            case 3: return hidden(pick / 5);
            default:
                return *secret_scripts_.emplace_back(std::make_unique<SecretScript>(
                    SecretScript{marker, kSecretKeys[pick % std::size(kSecretKeys)], pick / 5}));
        }
    }

    /// A value for any key that holds the marker only under a secret key inside it: a map or a
    /// user type.
    fieldlog::Value hidden(int pick) {
        const std::string_view secret_key = kSecretKeys[static_cast<std::size_t>(pick) % std::size(kSecretKeys)];
        if (pick % 2 == 0) {
            return *maps_.emplace_back(std::make_unique<std::map<std::string, std::string>>(
                std::map<std::string, std::string>{{std::string(secret_key), secrets_->marker}, {"plain", "p"}}));
        }
        return *secret_scripts_.emplace_back(std::make_unique<SecretScript>(SecretScript{secrets_->marker, secret_key, 2 + pick % 2}));
    }

    fieldlog::Value value(int depth) {
        const std::uint8_t kind = in_.byte() % 15;
        switch (kind) {
            case 0: return nullptr;
            case 1: return (in_.byte() & 1) != 0;
            case 2: return static_cast<std::int64_t>(in_.u64());
            case 3: return in_.u64();
            case 4: return std::bit_cast<double>(in_.u64());
            case 5: return keep(in_.bytes(40));
            case 6: return std::chrono::nanoseconds(static_cast<std::int64_t>(in_.u64()));
            case 7: return fieldlog::Timestamp(static_cast<std::int64_t>(in_.u64()) >> 20, static_cast<std::uint32_t>(in_.u64() % 1'000'000'000));
            case 8: {
                auto& ec = *errors_.emplace_back(std::make_unique<std::error_code>(in_.byte(), std::generic_category()));
                return ec;
            }
            case 9: {
                const std::string_view raw = keep(in_.bytes(20));
                return fieldlog::Bytes{std::as_bytes(std::span(raw.data(), raw.size()))};
            }
            case 10:
                if (depth < 6) {
                    auto& children = *objects_.emplace_back(std::make_unique<std::vector<fieldlog::Field>>(fields(4, depth + 1)));
                    return fieldlog::Object(std::span<const fieldlog::Field>(children));
                }
                return 0;
            case 11:
                if (depth < 6) {
                    auto& elements = *arrays_.emplace_back(std::make_unique<std::vector<fieldlog::Value>>());
                    const int n = in_.byte() % 5;
                    for (int i = 0; i < n; ++i) elements.push_back(value(depth + 1));
                    return fieldlog::Array(std::span<const fieldlog::Value>(elements));
                }
                return 1;
            case 12: {
                if (depth == 0) top_level_script = true;
                return *scripts_.emplace_back(std::make_unique<Script>(Script{std::string(in_.bytes(24))}));
            }
            case 13: {
                // Deep nesting through Array values: beyond the limit, a placeholder.
                auto& chain = *arrays_.emplace_back(std::make_unique<std::vector<fieldlog::Value>>(40));
                for (std::size_t i = 1; i < chain.size(); ++i) chain[i] = fieldlog::Array(std::span(&chain[i - 1], 1));
                return chain.back();
            }
            default:
                if (secrets_ != nullptr && depth < 6) return hidden(in_.byte());
                return std::chrono::microseconds(in_.byte());
        }
    }

    Reader& in_;
    const Secrets* secrets_;
    std::vector<std::unique_ptr<std::string>> strings_;
    std::vector<std::unique_ptr<std::error_code>> errors_;
    std::vector<std::unique_ptr<std::vector<fieldlog::Field>>> objects_;
    std::vector<std::unique_ptr<std::vector<fieldlog::Value>>> arrays_;
    std::vector<std::unique_ptr<Script>> scripts_;
    std::vector<std::unique_ptr<SecretScript>> secret_scripts_;
    std::vector<std::unique_ptr<std::map<std::string, std::string>>> maps_;
};

/// The loggers a record picks from. The last name's JSON form is too long to be made once: it
/// is escaped on every record.
inline std::vector<fieldlog::Logger> record_loggers() {
    return {fieldlog::get("fuzz"), fieldlog::get(""), fieldlog::get("a b"), fieldlog::get("\xFF\x1b[2J"),
            fieldlog::get(std::string(40, 'n') + "\"\x01")};
}

/// One record read from the input, its context live while this lives: the child logger with
/// the bound fields, and the scopes open on this thread (a scope with no fields is not opened).
/// The members are read from the input in the order they are declared in; the record refers to
/// nothing of the input's bytes, so it may outlive them.
struct Record {
    Record(Reader& in, std::span<const fieldlog::Logger> loggers, const Secrets* secrets = nullptr)
        : build(in, secrets),
          base(loggers[in.byte() % loggers.size()]),
          bound_parent(build.fields(4, 0)),
          bound_child(build.fields(3, 0)),
          outer_scope(build.fields(4, 0)),
          inner_scope(build.fields(3, 0)),
          call(build.fields(8, 0)),
          use_format((in.byte() & 1) != 0),
          message(in.bytes(60)),
          number(in.byte()),
          child(base.with(std::span<const fieldlog::Field>(bound_parent)).with(std::span<const fieldlog::Field>(bound_child))) {
        const std::uint64_t dropped_before = fieldlog::metrics().context_fields_dropped;
        if (!outer_scope.empty()) outer.emplace(std::span<const fieldlog::Field>(outer_scope));
        if (!inner_scope.empty()) inner.emplace(std::span<const fieldlog::Field>(inner_scope));
        scope_dropped = fieldlog::metrics().context_fields_dropped != dropped_before;
    }
    Record(const Record&) = delete;
    Record& operator=(const Record&) = delete;

    /// Logs the record at info through `logger` (child, or another to compare with): the message,
    /// plain or as fmt's "{}|{}" of message and number, and the call's fields.
    void log(const fieldlog::Logger& logger) const {
        const std::span<const fieldlog::Field> call_fields(call);
        if (use_format) {
            logger.log(fieldlog::Level::info, fieldlog::format("{}|{}", message, number), call_fields);
        } else {
            logger.log(fieldlog::Level::info, message, call_fields);
        }
    }

    Builder build;  // first: it owns what the field lists refer to, so it outlives them
    const fieldlog::Logger& base;
    const std::vector<fieldlog::Field> bound_parent;
    const std::vector<fieldlog::Field> bound_child;
    const std::vector<fieldlog::Field> outer_scope;
    const std::vector<fieldlog::Field> inner_scope;
    const std::vector<fieldlog::Field> call;
    const bool use_format;
    const std::string message;
    const int number;
    const fieldlog::Logger child;  // base.with(bound_parent).with(bound_child)
    /// True when opening the scopes dropped fields (Metrics::context_fields_dropped moved).
    bool scope_dropped = false;
    std::optional<fieldlog::Scope> outer;  // last, so closed first, the inner one before it
    std::optional<fieldlog::Scope> inner;
};

}  // namespace record_generator
