// SPDX-License-Identifier: MIT
// SinkTarget's members that depend on no options type.
#include "fieldlog/sink_target.hpp"

#include <stdexcept>

#include "fieldlog/sinks/basic_sinks.hpp"

namespace fieldlog {

SinkTarget::SinkTarget() : SinkTarget(StdoutSinkOptions{}) {}

std::shared_ptr<Sink> SinkTarget::make() const {
    if (options_) return options_->make();
    if (!sink_) throw std::invalid_argument("an empty std::shared_ptr<Sink>");
    return sink_;
}

SinkDestination SinkTarget::destination() const {
    if (options_) return options_->destination();
    if (!sink_) return {.kind = "custom"};  // make() refuses it
    const SinkInfo info = sink_->info();
    return {.kind = info.kind, .target = info.target};
}

bool SinkTarget::shares_destination(const SinkTarget& other) const {
    if (sink_ || other.sink_) return sink_ && sink_ == other.sink_;
    const SinkDestination mine = destination();
    const SinkDestination theirs = other.destination();
    return mine.exclusive && theirs.exclusive && mine.kind == theirs.kind && mine.target == theirs.target;
}

bool SinkTarget::same_as(const SinkTarget& other) const {
    if (options_ && other.options_) return options_->equals(*other.options_);
    return !options_ && !other.options_ && sink_ == other.sink_;
}

}  // namespace fieldlog
