// SPDX-License-Identifier: MIT
// A logger's context and backtrace: with() makes a context node that every record of the new
// logger carries, keep_backtrace() opens the logger's backtrace. The record path itself, from
// Logger::emit on, is the dispatcher's (dispatch/record_path.cpp).
#include "fieldlog/logger.hpp"

#include <memory>

#include "base/buffer.hpp"
#include "record/backtrace.hpp"
#include "record/context_node.hpp"
#include "record/thread_context.hpp"

namespace fieldlog {
namespace detail {

void retain_context(ContextNode* node) noexcept { retain(node); }

void release_context(ContextNode* node) noexcept {
    const ThreadContext* context = t_context;
    release(context != nullptr ? context->home : nullptr, node);
}

}  // namespace detail

Logger Logger::with(std::span<const Field> fields) const {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context_ != nullptr) detail::retain(context_);
    if (context == nullptr || context->busy) {  // no pool here, or its scratch buffer is in use
        const auto scratch = std::make_unique<detail::Buffer>();
        return Logger(core_, detail::make_context_node(nullptr, context_, fields, *scratch));
    }
    return Logger(core_, detail::make_context_node(context->home, context_, fields, context->scratch));
}

void Logger::keep_backtrace(const Backtrace& backtrace) const {
    detail::ThreadContext* context = detail::this_thread_context();
    // Inside a logging call this thread may hold the logger's backtrace, copying a record.
    if (context == nullptr || context->busy) return;
    detail::set_logger_backtrace(*context->home, *core_, backtrace);
}

}  // namespace fieldlog
