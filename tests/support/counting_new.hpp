// SPDX-License-Identifier: MIT
// The replaced global allocation functions, written once for every binary that counts heap
// use: the allocation tests, fieldlog_bench and the example service. Each form of operator new
// (throwing, nothrow, array, aligned) reports to on_allocation(), which the binary defines (a
// plain counter, or counters by cause), then takes the memory from malloc / aligned_alloc.
#pragma once

namespace fieldlog_support {

/// Called once per global operator new call, on the allocating thread. Defined by the binary
/// that links counting_new.cpp; MUST NOT allocate.
void on_allocation() noexcept;

}  // namespace fieldlog_support
