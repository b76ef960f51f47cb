// SPDX-License-Identifier: MIT
// An owned copy of a typed record, for a typed sink that keeps records past write_typed (the
// test observer; an exporter that batches its own way).
//
//   void write_typed(const fieldlog::TypedRecordView& record) override { kept_.emplace_back(record); }
//   ... later, on any thread: for (const auto& copy : kept_) send(copy.view());
#pragma once

#include <memory>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog {

/// The record path's own owned copy (the one async rings and backtraces keep) of a
/// TypedRecordView: its fields and strings in one block of its own, a user type's value
/// recorded once (its fieldlog_encode runs in the constructor; view() replays the recorded
/// calls), a fmt message formatted. view() reads as the original did, except that its message
/// is plain text and its options are null.
class FIELDLOG_API TypedRecordCopy {
public:
    /// Throws std::bad_alloc, or what a user type's encoding or a message's formatting throws.
    explicit TypedRecordCopy(const TypedRecordView& record);
    TypedRecordCopy(TypedRecordCopy&&) noexcept = default;
    // Out of line: they free the block, which only the library knows.
    TypedRecordCopy& operator=(TypedRecordCopy&&) noexcept;
    ~TypedRecordCopy();

    /// Refers into this copy: valid while it lives, and is not moved from.
    [[nodiscard]] TypedRecordView view() const noexcept;

private:
    struct Block;
    struct Release {
        void operator()(Block* block) const noexcept;
    };
    std::unique_ptr<Block, Release> block_;
};

}  // namespace fieldlog
