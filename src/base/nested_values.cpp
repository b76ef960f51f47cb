// SPDX-License-Identifier: MIT
// The heap copies of nested lists that a copied Field owns (include/fieldlog/field.hpp): a
// brace list ends with the statement that wrote it, and a kept Field must outlive it. Each
// copy is one block: a header naming the owner, then the elements.
#include <cstddef>
#include <memory>
#include <new>
#include <span>

#include "fieldlog/field.hpp"

namespace fieldlog {
namespace {

/// Before an owned list's elements. `owner` is the Field that frees the list; null for a list
/// in an array's element, which the block holding that element frees.
struct OwnedHeader {
    const Field* owner;
};
static_assert(sizeof(OwnedHeader) % alignof(Field) == 0 && sizeof(OwnedHeader) % alignof(Value) == 0);

OwnedHeader* header_of(const void* elements) noexcept {
    return reinterpret_cast<OwnedHeader*>(static_cast<char*>(const_cast<void*>(elements)) - sizeof(OwnedHeader));
}

template <typename T>
T* allocate_owned(std::size_t count, const Field* owner) {
    void* block = ::operator new(sizeof(OwnedHeader) + count * sizeof(T));
    new (block) OwnedHeader{owner};
    return reinterpret_cast<T*>(static_cast<char*>(block) + sizeof(OwnedHeader));
}

void deallocate_owned(const void* elements) noexcept { ::operator delete(header_of(elements)); }

}  // namespace

void Value::own_nested(const Field* owner) {
    const std::size_t count = kind_ == Kind::object ? object_.size() : array_.size();
    if (count == 0) {
        if (kind_ == Kind::object) {
            object_ = {};
        } else {
            array_ = {};
        }
        nested_ = Nested::kept_by_caller;
        return;
    }
    std::size_t made = 0;
    if (kind_ == Kind::object) {
        Field* to = allocate_owned<Field>(count, owner);
        try {
            for (; made < count; ++made) new (to + made) Field(object_[made]);  // owns its own lists
        } catch (...) {
            std::destroy_n(to, made);
            deallocate_owned(to);
            throw;
        }
        object_ = {to, count};
    } else {
        Value* to = allocate_owned<Value>(count, owner);
        try {
            for (; made < count; ++made) {
                new (to + made) Value(array_[made]);
                if (to[made].nested_ != Nested::kept_by_caller) to[made].own_nested(nullptr);
            }
        } catch (...) {
            for (std::size_t i = 0; i < made; ++i) {
                if (to[i].nested_ == Nested::owned) to[i].free_nested();
            }
            deallocate_owned(to);
            throw;
        }
        array_ = {to, count};
    }
    nested_ = Nested::owned;
}

bool Value::owned_by(const Field* owner) const noexcept {
    return header_of(kind_ == Kind::object ? static_cast<const void*>(object_.data()) : array_.data())->owner == owner;
}

void Value::pass_to(const Field* owner) noexcept {
    header_of(kind_ == Kind::object ? static_cast<const void*>(object_.data()) : array_.data())->owner = owner;
}

void Value::free_if_owned_by(const Field* owner) noexcept {
    if (owned_by(owner)) free_nested();
}

void Value::free_nested() noexcept {
    if (kind_ == Kind::object) {
        std::destroy_n(const_cast<Field*>(object_.data()), object_.size());
        deallocate_owned(object_.data());
    } else {
        // Every owned list among the elements was made for this block (own_nested copies each).
        for (const Value& element : array_) {
            if (element.nested_ == Nested::owned) const_cast<Value&>(element).free_nested();
        }
        deallocate_owned(array_.data());
    }
}

}  // namespace fieldlog
