// SPDX-License-Identifier: MIT
// Exceptions as field values: the dynamic type (demangled) and what(), then the exceptions
// nested in it (std::nested_exception) as "causes", outermost first. Cold: only a record that
// logs an exception comes here.
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "fieldlog/field.hpp"

namespace fieldlog::detail {
namespace {

/// A chain longer than this is cut, with "causes_truncated":true (a cycle cannot be built with
/// std::throw_with_nested, but a user type can make nested_ptr() return anything).
constexpr int kMaxCauses = 16;

/// `name` (in place) without libc++'s inline namespace: std::system_error, not
/// std::__1::system_error, so a type is named alike with either standard library.
std::string_view without_abi_namespace(char* name) noexcept {
    constexpr std::string_view kInline = "std::__1::";
    constexpr std::size_t kKept = std::string_view("std::").size();
    constexpr std::size_t kCut = kInline.size() - kKept;
    std::size_t size = std::strlen(name);
    for (std::size_t at = 0; at + kInline.size() <= size; ++at) {
        if (std::string_view(name + at, kInline.size()) != kInline) continue;
        std::memmove(name + at + kKept, name + at + kInline.size(), size - at - kInline.size());
        size -= kCut;
    }
    return {name, size};
}

/// The demangled name of `type`, in a buffer kept per thread: __cxa_demangle grows it with
/// realloc when a longer name comes, so a thread pays the heap only for its longest name.
std::string_view demangled(const std::type_info& type) noexcept {
    thread_local char* buffer = nullptr;
    thread_local std::size_t capacity = 0;
    int status = 0;
    std::size_t size = capacity;
    char* result = abi::__cxa_demangle(type.name(), buffer, &size, &status);
    if (status != 0 || result == nullptr) return type.name();  // not a mangled name: as the ABI has it
    buffer = result;
    capacity = size > capacity ? size : capacity;
    return without_abi_namespace(buffer);
}

/// The type a user threw: std::throw_with_nested throws a class derived from it, which the
/// standard libraries name std::_Nested_exception<T> (libstdc++) and std::__nested<T> (libc++).
std::string_view thrown_type(std::string_view name) noexcept {
    for (const std::string_view wrapper : {std::string_view("std::_Nested_exception<"), std::string_view("std::__nested<")}) {
        if (name.size() > wrapper.size() && name.starts_with(wrapper) && name.back() == '>') {
            return name.substr(wrapper.size(), name.size() - wrapper.size() - 1);
        }
    }
    return name;
}

void write_one(ValueEncoder& enc, const std::exception& e) {
    enc.key("type");
    enc.value(thrown_type(demangled(typeid(e))));
    enc.key("what");
    const char* what = e.what();
    enc.value(what != nullptr ? std::string_view(what) : std::string_view());
}

/// What `p` holds, as one object with no causes (a throw of a non-exception type has no what()).
void write_held(ValueEncoder& enc, const std::exception_ptr& p, const std::exception*& as_exception) {
    as_exception = nullptr;
    try {
        std::rethrow_exception(p);
    } catch (const std::exception& e) {
        as_exception = &e;  // the object lives as long as p holds it
        write_one(enc, e);
    } catch (...) {
        const std::type_info* type = abi::__cxa_current_exception_type();
        enc.key("type");
        enc.value(type != nullptr ? demangled(*type) : std::string_view("unknown"));
    }
}

void write_exception(ValueEncoder& enc, const std::exception& outer) {
    enc.begin_object();
    write_one(enc, outer);
    const auto* nested = dynamic_cast<const std::nested_exception*>(&outer);
    if (nested != nullptr && nested->nested_ptr() != nullptr) {
        enc.key("causes");
        enc.begin_array();
        int depth = 0;
        std::exception_ptr next = nested->nested_ptr();
        while (next != nullptr && depth < kMaxCauses) {
            enc.begin_object();
            const std::exception* held = nullptr;
            write_held(enc, next, held);
            enc.end_object();
            ++depth;
            const auto* inner = held != nullptr ? dynamic_cast<const std::nested_exception*>(held) : nullptr;
            next = inner != nullptr ? inner->nested_ptr() : nullptr;
        }
        enc.end_array();
        if (next != nullptr) {
            enc.key("causes_truncated");
            enc.value(true);
        }
    }
    enc.end_object();
}

}  // namespace

void encode_exception(ValueEncoder& enc, const void* object) {
    write_exception(enc, *static_cast<const std::exception*>(object));
}

void encode_exception_ptr(ValueEncoder& enc, const void* object) {
    const auto& p = *static_cast<const std::exception_ptr*>(object);
    if (p == nullptr) {
        enc.value(nullptr);
        return;
    }
    try {
        std::rethrow_exception(p);
    } catch (const std::exception& e) {
        write_exception(enc, e);
    } catch (...) {
        enc.begin_object();
        const std::exception* held = nullptr;
        write_held(enc, p, held);
        enc.end_object();
    }
}

}  // namespace fieldlog::detail
