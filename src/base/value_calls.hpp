// SPDX-License-Identifier: MIT
// A structured value as the ValueEncoder calls that make it up: for the encoders that record or
// rebuild values instead of writing them (the context nodes' tape, the test observer).
#pragma once

#include "fieldlog/encoder.hpp"
#include "fieldlog/field.hpp"

namespace fieldlog::detail {

/// Gives `enc` an object, an array or a user type's value as calls: begin, then key and
/// value() for each member (value() for each element), then end; a user type makes its own.
/// False, calling nothing, for any other kind.
inline bool write_as_calls(ValueEncoder& enc, const Value& v) {
    switch (v.kind()) {
        case Value::Kind::object:
            enc.begin_object();
            for (const Field& f : v.as_object()) {
                enc.key(f.key);
                enc.value(f.value);
            }
            enc.end_object();
            return true;
        case Value::Kind::array:
            enc.begin_array();
            for (const Value& element : v.as_array()) enc.value(element);
            enc.end_array();
            return true;
        case Value::Kind::custom: v.encode_custom_into(enc); return true;
        default: return false;
    }
}

}  // namespace fieldlog::detail
