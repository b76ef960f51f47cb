// SPDX-License-Identifier: MIT
// The JSON encoder: one object per line, keys ts, level, logger, msg, bound fields, scope
// fields, call fields. Streams values with a small explicit stack (depth limit kMaxDepth), so
// user types can write nested objects and arrays without recursion into the heap.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/buffer.hpp"
#include "encode/members.hpp"
#include "base/record.hpp"
#include "encode/redact.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

class JsonEncoder final : public ValueEncoder {
public:
    static constexpr int kMaxDepth = 32;
    /// Written in place of a container nested deeper than kMaxDepth.
    static constexpr std::string_view kDepthPlaceholder = "\"[depth limit]\"";

    /// Bytes between a top-level member's start and its key: the comma and the opening quote.
    static constexpr std::uint8_t kKeyOffset = 2;

    /// `scratch` is where fmt-formatted text is assembled before it is escaped.
    JsonEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options) noexcept
        : out_(out), scratch_(scratch), options_(options), members_(out) {
        // Only the top level's entry: open() sets each deeper one as it is entered.
        is_array_[0] = false;
        has_items_[0] = false;
    }

    /// Appends one whole record, ending in '\n', through an encoder of its own: the record
    /// path's one frame in the encoder (record() is inlined into it).
    static void write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options, const Record& record,
                             const EncodedContexts& context);
    /// Appends `parent` then `,"key":value` for each field (the form bound and scope fields are
    /// kept in), keys made unique; members() then describes the run.
    void fields(const Segment& parent, std::span<const Field> fields);
    [[nodiscard]] const MemberIndex& members() const noexcept { return members_; }
    /// The record's top level, for an encoder that writes a record's fields as one object of
    /// its own (otel's attributes) and its other members itself.
    [[nodiscard]] MemberIndex& index() noexcept { return members_; }
    /// Appends `,"key":value` for each of a record's call fields after the members written so
    /// far, keys made unique with them: what record() writes after the bound and scope fields.
    void top_fields(std::span<const Field> fields) {
        if (!fields.empty()) write_top_fields(fields, false);
    }
    /// Makes the next value() or begin_*() a whole JSON value with no key (console and logfmt
    /// write nested containers through this).
    void expect_value() noexcept { after_key_ = true; }
    /// True when no container is open (or being skipped).
    [[nodiscard]] bool idle() const noexcept { return depth_ == 0 && ignored_ == 0; }
    /// Closes every open container (a user type that forgot its end_*()).
    void close_all();

    void value(const Value& v) override;
    void begin_array() override;
    void end_array() override;
    void begin_object() override;
    void key(std::string_view k) override;
    void end_object() override;
    void formatted(fmt::string_view format, fmt::format_args args) override;

private:
    /// write_record()'s body.
    void record(const Record& record, const EncodedContexts& context);
    /// The call's own members the options ask for: caller (and function), tid.
    void write_call_facts(const Record& record);
    /// Top-level members whose keys are in the index's mask but which have no entry yet.
    struct PendingMembers {
        static constexpr std::size_t kMax = 32;
        std::size_t count = 0;
        std::uint64_t bits = 0;  ///< their keys' bits
        std::size_t start[kMax];
        std::uint32_t tag[kMax];
        std::uint32_t key_len[kMax];
    };
    /// The top level's members; `indexed`: the index holds every one afterwards (a caller reads
    /// members()), else entries are made only while some later key may repeat an earlier one.
    void write_fields(std::span<const Field> fields, bool indexed);
    /// write_fields() under redaction rules or a cap: through a RedactingEncoder (redact.hpp).
    void write_guarded_fields(std::span<const Field> fields);
    /// The top level's members, guarded or not: the one test of the options a record pays
    /// (here, so that write_fields() stays as it was without it).
    void write_top_fields(std::span<const Field> fields, bool indexed) {
        if (is_guarded(options_)) [[unlikely]] {
            write_guarded_fields(fields);
        } else {
            write_fields(fields, indexed);
        }
    }
    /// A top-level key that is short, plain, not reserved and (by its mask bit, else compared)
    /// none of the pending ones: written, and added to `pending`. False, writing nothing,
    /// for any other key.
    bool write_pending_key(std::string_view k, PendingMembers& pending);
    /// Makes the entries of the pending members.
    void index_pending(PendingMembers& pending);
    /// key()'s body, called directly by the encoder's own member loops (no virtual call).
    void write_key(std::string_view k);
    /// A key known short and not repeated (see write_object()), in a nested object: written
    /// with its separator when it is JSON-safe; false, writing nothing that counts, otherwise.
    bool write_plain_key(std::string_view k);
    /// An Object value, brackets included. While its keys are short, JSON-safe and distinct as
    /// given, and no value is a user type, it is written as given and skips the duplicate-key
    /// index and its level for the object; any other Object goes through it.
    void write_object(std::span<const Field> fields);
    /// Writes what goes before a value (an array's comma); false when no value may go here.
    /// Inline: every scalar passes through it.
    bool begin_value() {
        if (ignored_ > 0) return false;
        if (is_array_[depth_]) {
            if (has_items_[depth_]) out_.push_back(',');
            has_items_[depth_] = true;
            return true;
        }
        if (!after_key_) return false;  // in an object a value needs a key first
        after_key_ = false;
        return true;
    }
    /// A member's value, right after write_key() in the encoder's own member loops (the top
    /// level, Object): there no container is being skipped and the key was just written, so
    /// begin_value() reduces to clearing after_key_ (saving a call through value() a member).
    void write_member_value(const Value& v) {
        if (v.kind() == Value::Kind::custom) {
            write_custom(v);
            return;
        }
        after_key_ = false;
        write_value(v);
    }
    /// A value after its separator. The commonest kinds are written inline in the caller: a
    /// call into one function for every kind cost each value its register saves.
    void write_value(const Value& v);
    /// A time value.
    void write_time(Timestamp t);
    /// Every other kind: containers, errors, durations, floats, bytes, null, booleans.
    void write_other_value(const Value& v);
    void write_custom(const Value& v);
    /// Open and close a container.
    bool open(char bracket, bool is_array);
    void close();
    void end_container();
    using AppendTime = char* (*)(char*, Timestamp, const TimestampFormat&) noexcept;
    /// Writes a time (quoted unless numeric) at `o`, which has room for it, through `Append`
    /// (append_rfc3339 for the record's time, append_rfc3339_value for fields); returns the end.
    /// A template: a call through a pointer cost every time value more.
    template <AppendTime Append>
    char* write_timestamp(char* o, Timestamp t) const noexcept {
        const bool quoted = !options_.timestamp.is_numeric();
        if (quoted) *o++ = '"';
        o = Append(o, t, options_.timestamp);
        if (quoted) *o++ = '"';
        return o;
    }

    Buffer& out_;
    Buffer& scratch_;
    const EncoderOptions& options_;
    MemberIndex members_;
    int depth_ = 0;
    int ignored_ = 0;  ///< containers being skipped (too deep, or a value without a key)
    // A user type may close only what it opened: end_*() below these is ignored, and what it
    // leaves open is closed when it returns.
    int depth_floor_ = 0;
    int ignored_floor_ = 0;
    bool after_key_ = false;
    // Per open container, [0] the top level; entries above depth_ are not read (left
    // uninitialised: one encoder is made per record).
    bool is_array_[kMaxDepth + 1];   // NOLINT(cppcoreguidelines-pro-type-member-init)
    bool has_items_[kMaxDepth + 1];  // NOLINT(cppcoreguidelines-pro-type-member-init)
};

}  // namespace fieldlog::detail
