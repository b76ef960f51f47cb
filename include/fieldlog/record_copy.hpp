// SPDX-License-Identifier: MIT
// An owned copy of a record's parts, for a sink that reads parts (SinkInfo::lines false) and
// keeps records past write (the test observer; an exporter that batches its own way).
//
//   void write(const fieldlog::RecordView& record) override { kept_.emplace_back(record); }
//   ... later, on any thread: for (const auto& copy : kept_) send(copy.view());
#pragma once

#include <memory>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog {

/// The record path's own owned copy (the one async rings and backtraces keep) of a
/// RecordView's parts: its fields and strings in one block of its own, a user type's value
/// recorded once (its fieldlog_encode runs in the constructor; view() replays the recorded
/// calls), a fmt message formatted. view() reads as the original did, except that its message
/// is plain text, and its bytes and options are empty.
class FIELDLOG_API RecordCopy {
public:
    /// Throws std::invalid_argument for a view without parts (a line's), std::bad_alloc, or what
    /// a user type's encoding or a message's formatting throws.
    explicit RecordCopy(const RecordView& record);
    RecordCopy(RecordCopy&&) noexcept = default;
    // Out of line: they free the block, which only the library knows.
    RecordCopy& operator=(RecordCopy&&) noexcept;
    ~RecordCopy();

    /// Refers into this copy: valid while it lives, and is not moved from.
    [[nodiscard]] RecordView view() const noexcept;

private:
    struct Block;
    struct Release {
        void operator()(Block* block) const noexcept;
    };
    std::unique_ptr<Block, Release> block_;
};

}  // namespace fieldlog
