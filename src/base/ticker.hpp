// SPDX-License-Identifier: MIT
// One shared background thread for periodic chores, off the record path: the dispatcher's sink
// ticks (a file buffer that waited flush_interval, logrotate having moved a file) and a UDP
// sink's host name resolution. It runs only while something is registered and is joined when
// the last one leaves. Below every layer, so both the dispatcher and the sinks may use it.
#pragma once

#include <chrono>

namespace fieldlog::detail {

/// Something the ticker calls about every `period` (given when it is added).
class Tickable {
public:
    /// Does what is due at `now`. Runs on the ticker thread; MUST NOT throw or block for long.
    virtual void tick(std::chrono::steady_clock::time_point now) noexcept = 0;

protected:
    Tickable() = default;
    Tickable(const Tickable&) = default;
    Tickable& operator=(const Tickable&) = default;
    ~Tickable() = default;
};

/// Starts calling `item->tick()` about every `period` (at least 1 ms); starts the thread if needed.
void add_ticking(Tickable* item, std::chrono::milliseconds period);
/// Stops calling `item`; on return no tick of it runs or will run. Joins the thread when it was
/// the last item. MUST NOT be called from tick().
void remove_ticking(Tickable* item) noexcept;

}  // namespace fieldlog::detail
