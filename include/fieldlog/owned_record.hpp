// SPDX-License-Identifier: MIT
// Records kept past write, for a sink that reads parts (SinkInfo::lines false) and keeps them
// (the test observer; an exporter that batches its own way).
//
//   void write(const fieldlog::RecordView& record) override { kept_.push_back(fieldlog::copy_record(record)); }
//   ... later, on any thread: for (const auto& copy : kept_) send(fieldlog::view_of(*copy));
#pragma once

#include <memory>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog {

/// The record path's owned copy of a record, the one async rings and backtraces keep: opaque
/// outside the library.
struct OwnedRecord;

/// A copy of `record`'s parts in one block of its own: its context as fields, a user type's
/// value recorded once (its fieldlog_encode runs here; view_of replays the recorded calls), a
/// fmt message formatted. Throws std::invalid_argument for a view without parts (a line's),
/// std::bad_alloc, or what a user type's encoding or a message's formatting throws.
[[nodiscard]] FIELDLOG_API std::shared_ptr<const OwnedRecord> copy_record(const RecordView& record);

/// A copy_record copy read as the view it was made from, except that its message is plain text
/// and its bytes and options are empty. Refers into `copy`: valid while it lives.
[[nodiscard]] FIELDLOG_API RecordView view_of(const OwnedRecord& copy) noexcept;

}  // namespace fieldlog
