#include "encode/json_encoder.hpp"

#include <cmath>

#include "encode/text.hpp"

namespace fieldlog::detail {

void JsonEncoder::record(const RecordInput& r) {
    out_.append("{\"ts\":");
    write_timestamp(r.time);
    out_.append(",\"level\":\"");
    out_.append(to_string(r.level));
    out_.append("\",\"logger\":");
    append_json_string(out_, r.logger);
    out_.append(",\"msg\":\"");
    if (r.message.formatted()) {
        scratch_.clear();
        fmt::vformat_to(std::back_inserter(scratch_), r.message.text(), r.message.args());
        append_json_escaped(out_, scratch_.view());
        scratch_.shrink();
    } else {
        append_json_escaped(out_, r.message.text());
    }
    out_.push_back('"');
    out_.append(r.bound);
    out_.append(r.scope);
    fields(r.fields);
    out_.append("}\n");
}

void JsonEncoder::fields(std::span<const Field> fields) {
    depth_ = 0;
    is_array_[0] = false;
    has_items_[0] = true;
    for (const Field& f : fields) {
        key(f.key);
        value(f.value);
    }
    if (after_key_) {  // a custom value wrote nothing: keep the member valid
        out_.append("null");
        after_key_ = false;
    }
}

bool JsonEncoder::begin_value() {
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

void JsonEncoder::key(std::string_view k) {
    if (ignored_ > 0 || is_array_[depth_]) return;
    if (after_key_) out_.append("null");  // the previous key got no value
    if (has_items_[depth_]) out_.push_back(',');
    has_items_[depth_] = true;
    append_json_string(out_, k);
    out_.push_back(':');
    after_key_ = true;
}

void JsonEncoder::value(const Value& v) {
    if (v.kind() == Value::Kind::custom) {
        v.encode_custom_into(*this);  // it calls back into value()/begin_*()
        return;
    }
    if (begin_value()) write_value(v);
}

bool JsonEncoder::open(char bracket, bool is_array) {
    if (depth_ == kMaxDepth) {
        out_.append(kDepthPlaceholder);
        return false;
    }
    out_.push_back(bracket);
    ++depth_;
    is_array_[depth_] = is_array;
    has_items_[depth_] = false;
    return true;
}

void JsonEncoder::close(char bracket) {
    if (after_key_) {
        out_.append("null");
        after_key_ = false;
    }
    out_.push_back(bracket);
    --depth_;
}

void JsonEncoder::begin_array() {
    if (!begin_value() || !open('[', true)) ++ignored_;
}
void JsonEncoder::begin_object() {
    if (!begin_value() || !open('{', false)) ++ignored_;
}
void JsonEncoder::end_array() {
    if (ignored_ > 0) {
        --ignored_;
    } else if (depth_ > 0) {
        close(']');
    }
}
void JsonEncoder::end_object() {
    if (ignored_ > 0) {
        --ignored_;
    } else if (depth_ > 0) {
        close('}');
    }
}

void JsonEncoder::formatted(fmt::string_view format, fmt::format_args args) {
    if (!begin_value()) return;
    scratch_.clear();
    fmt::vformat_to(std::back_inserter(scratch_), format, args);
    append_json_string(out_, scratch_.view());
    scratch_.shrink();
}

void JsonEncoder::write_timestamp(Timestamp t) {
    const bool quoted = !options_.timestamp.is_numeric();
    char* o = out_.reserve(max_rfc3339_size + 2);
    if (quoted) *o++ = '"';
    o = append_rfc3339(o, t, options_.timestamp);
    if (quoted) *o++ = '"';
    out_.commit(o);
}

void JsonEncoder::write_value(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::null: out_.append("null"); break;
        case Value::Kind::boolean: out_.append(v.as_bool() ? "true" : "false"); break;
        case Value::Kind::int64: append_int(out_, v.as_int64()); break;
        case Value::Kind::uint64: append_uint(out_, v.as_uint64()); break;
        case Value::Kind::float64: {
            const double d = v.as_double();
            if (std::isnan(d)) {
                out_.append("\"NaN\"");
            } else if (std::isinf(d)) {
                out_.append(d > 0 ? "\"+Inf\"" : "\"-Inf\"");
            } else {
                append_double(out_, d);
            }
            break;
        }
        case Value::Kind::string: append_json_string(out_, v.as_string()); break;
        case Value::Kind::duration:
            switch (options_.duration) {
                case DurationFormat::string:
                    out_.push_back('"');
                    append_go_duration(out_, v.as_duration_nanos());
                    out_.push_back('"');
                    break;
                case DurationFormat::nanos: append_int(out_, v.as_duration_nanos()); break;
                case DurationFormat::seconds:
                    append_double(out_, static_cast<double>(v.as_duration_nanos()) / 1e9);
                    break;
            }
            break;
        case Value::Kind::time: write_timestamp(v.as_time()); break;
        case Value::Kind::error_code:
            out_.push_back('"');
            {
                const std::size_t start = out_.size();
                append_error_code(out_, v.as_error_code());
                // The message text is not ours: escape it in place via the scratch buffer.
                scratch_.clear();
                scratch_.append(out_.data() + start, out_.size() - start);
                out_.truncate(start);
                append_json_escaped(out_, scratch_.view());
            }
            out_.push_back('"');
            break;
        case Value::Kind::bytes:
            out_.push_back('"');
            append_base64(out_, v.as_bytes());
            out_.push_back('"');
            break;
        case Value::Kind::object:
            if (open('{', false)) {
                for (const Field& f : v.as_object()) {
                    key(f.key);
                    value(f.value);
                }
                close('}');
            }
            break;
        case Value::Kind::array:
            if (open('[', true)) {
                for (const Value& element : v.as_array()) value(element);
                close(']');
            }
            break;
        case Value::Kind::custom: v.encode_custom_into(*this); break;
    }
}

}  // namespace fieldlog::detail
