// SPDX-License-Identifier: MIT
// fieldlog::Scope on the layers of its thread (scope_layers.hpp). Opening a scope makes one
// context node on top of the thread's chain and pushes a layer; closing the innermost pops it;
// closing another remakes the layers above it on the one below (rare). A scope closed on
// another thread, or from inside a logging call, is queued for its thread (a ticket on a
// lock-free list), which closes it before its next record. No lock, no heap in steady state.
#include "fieldlog/scope.hpp"

#include <array>
#include <new>

#include "record/context_node.hpp"
#include "record/scope_layers.hpp"
#include "record/thread_context.hpp"

namespace fieldlog {
namespace detail {
namespace {

/// A trace position as scope fields, in text that lives as long as this object.
struct TraceFields {
    explicit TraceFields(const TraceContext& trace) noexcept
        : trace_id(trace.trace_id_hex()), span_id(trace.span_id_hex()), flags(trace.flags_hex()) {}
    FixedText<32> trace_id;
    FixedText<16> span_id;
    FixedText<2> flags;
    const std::array<Field, 3> fields{
        {{"trace_id", trace_id.view()}, {"span_id", span_id.view()}, {"trace_flags", flags.view()}}};
};

/// True when `node`'s chain already holds `top` (or there is none): re-opening it on top adds
/// exactly what it holds beyond the scopes open here.
bool chain_holds(const ContextNode* node, const ContextNode* top) noexcept {
    if (top == nullptr) return true;
    for (const ContextNode* n = node; n != nullptr; n = n->parent) {
        if (n == top) return true;
    }
    return false;
}

/// Counts a scope's level in the level check (logger.hpp): records at it and above pass it on
/// every thread while the scope is open, and Logger::emit decides by the thread's own scopes.
void count_scope_level(Level level, bool open) noexcept {
    for (auto l = static_cast<std::size_t>(level); l < level_count - 1; ++l) {
        if (open) {
            below_level_takers[l].fetch_add(1, std::memory_order_relaxed);
        } else {
            below_level_takers[l].fetch_sub(1, std::memory_order_relaxed);
        }
    }
}

/// The innermost open level, after a layer with one closed.
void find_scope_level(ContextHome& home) noexcept {
    home.scope_level.reset();
    for (auto layer = home.layers.rbegin(); layer != home.layers.rend(); ++layer) {
        if (layer->level) {
            home.scope_level = layer->level;
            return;
        }
    }
}

/// MUST: the layers have room for one more (push_back cannot throw).
inline void push_layer(ContextHome& home, ContextNode* own, ContextNode* chain, const Backtrace& backtrace,
                       std::optional<Level> level) noexcept {
    BacktraceStore* const kept = backtrace.records != 0 ? open_kept_records(home, backtrace) : nullptr;
    home.layers.push_back(ScopeLayer{own, chain, kept, level});
    if (kept != nullptr) ++home.backtraces;
    if (level) {
        count_scope_level(*level, true);
        home.scope_level = level;
    }
    home.top = chain;
}

/// Gives back what a closing layer's backtrace kept, and its level's count in the level check.
void close_backtrace(ContextHome& home, ScopeLayer& layer) noexcept {
    if (layer.level) {
        count_scope_level(*layer.level, false);
        layer.level.reset();
    }
    if (layer.kept == nullptr) return;
    close_kept_records(home, layer.kept);
    layer.kept = nullptr;
    --home.backtraces;
}

/// A node for `fields` on `parent` (a reference is taken), or, when that fails (a user type
/// threw, memory ran out), `parent` itself with the loss counted.
ContextNode* node_or_parent(ContextHome& home, ContextNode* parent, std::span<const Field> fields, Buffer& scratch,
                            ThreadCounters* counters) noexcept {
    if (parent != nullptr) retain(parent);
    try {
        return make_context_node(&home, parent, fields, scratch);
    } catch (...) {
        if (counters != nullptr) ThreadCounters::bump(counters->context_fields_dropped, fields.size());
        if (parent != nullptr) retain(parent);
        return parent;
    }
}

ThreadCounters* counters_of_this_thread() noexcept {
    ThreadContext* context = t_context;
    return context != nullptr ? &context->counters : nullptr;
}

/// close_layer() for a layer that is not the innermost, or was re-opened from a capture.
void close_layer_slow(ContextHome& home, ContextNode* own, Buffer& scratch) noexcept;

/// Removes the innermost layer opened for `own` and drops `own`'s reference (the closing
/// Scope's); the layers above it are remade on the one below, each with the fields its own
/// chain added. A scope closing innermost, the usual case, only pops.
inline void close_layer(ContextHome& home, ContextNode* own, Buffer& scratch) noexcept {
    std::vector<ScopeLayer>& layers = home.layers;
    if (!layers.empty() && layers.back().own == own && layers.back().chain == own) [[likely]] {  // the innermost: pop
        const bool had_level = layers.back().level.has_value();
        close_backtrace(home, layers.back());
        layers.pop_back();
        if (had_level) find_scope_level(home);
        home.top = layers.empty() ? nullptr : layers.back().chain;
        release(&home, own, 2);  // the layer's reference and the Scope's
        return;
    }
    close_layer_slow(home, own, scratch);
}

void close_layer_slow(ContextHome& home, ContextNode* own, Buffer& scratch) noexcept {
    std::vector<ScopeLayer>& layers = home.layers;
    std::size_t i = layers.size();
    while (i > 0 && layers[i - 1].own != own) --i;
    if (i == 0) {  // not open here: its thread exited before it closed
        release(&home, own);
        return;
    }
    --i;
    ContextNode* const removed = layers[i].chain;
    ContextNode* below = i == 0 ? nullptr : layers[i - 1].chain;
    ContextNode* previous = removed;  // the chain the next layer was opened on
    for (std::size_t j = i + 1; j < layers.size(); ++j) {
        ContextNode* const old_chain = layers[j].chain;
        home.gathered.clear();
        gather_fields(old_chain, previous, home.gathered);
        ContextNode* remade = node_or_parent(home, below, home.gathered, scratch, counters_of_this_thread());
        home.gathered.clear();
        if (layers[j].kept != nullptr) hold_kept_scopes(*layers[j].kept, old_chain);
        release(&home, old_chain);
        layers[j].chain = remade;
        previous = old_chain;  // still alive: the next layer's old chain holds it
        below = remade;
    }
    release(&home, removed);
    close_backtrace(home, layers[i]);
    layers.erase(layers.begin() + static_cast<std::ptrdiff_t>(i));
    find_scope_level(home);
    home.top = layers.empty() ? nullptr : layers.back().chain;
    release(&home, own);
}

/// Queues `own`'s scope to be closed by the thread of `home`; false when no ticket could be made.
bool queue_close(ContextHome& home, ContextNode* own, ContextHome* current) noexcept {
    CloseTicket* ticket;
    try {
        ticket = new (pool_allocate(current, sizeof(CloseTicket))) CloseTicket{nullptr, own};
    } catch (...) {
        return false;
    }
    CloseTicket* head = home.remote_closes.load(std::memory_order_relaxed);
    do {
        ticket->next = head;
    } while (!home.remote_closes.compare_exchange_weak(head, ticket, std::memory_order_release,
                                                       std::memory_order_relaxed));
    return true;
}

}  // namespace

void close_queued_scopes(ContextHome& home, Buffer& scratch) noexcept {
    CloseTicket* ticket = home.remote_closes.exchange(nullptr, std::memory_order_acquire);
    while (ticket != nullptr) {
        CloseTicket* next = ticket->next;
        close_layer(home, ticket->own, scratch);
        ticket->~CloseTicket();
        pool_release(&home, ticket);
        ticket = next;
    }
}

void close_all_scopes(ContextHome& home, Buffer& scratch) noexcept {
    close_queued_scopes(home, scratch);
    while (!home.layers.empty()) {
        close_backtrace(home, home.layers.back());
        release(&home, home.layers.back().chain);
        home.layers.pop_back();
    }
    home.scope_level.reset();
    home.top = nullptr;
}

}  // namespace detail

Scope::Scope(std::span<const Field> fields, const Backtrace& backtrace) noexcept : Scope(fields, backtrace, std::nullopt) {}

Scope::Scope(std::span<const Field> fields, const Backtrace& backtrace, std::optional<Level> level) noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) return;
    if (context->busy) {  // opened from inside a logging call: its buffers are in use
        detail::ThreadCounters::bump(context->counters.context_fields_dropped, fields.size());
        return;
    }
    detail::ContextHome& home = *context->home;
    detail::close_queued(home, context->scratch);
    detail::ContextNode* node;
    try {
        if (home.layers.size() == home.layers.capacity()) home.layers.reserve(2 * home.layers.size() + 16);
        if (home.top != nullptr) detail::retain(home.top);
        node = detail::make_context_node(&home, home.top, fields, context->scratch);
    } catch (...) {  // a value threw while being copied, or memory ran out: opens nothing
        detail::ThreadCounters::bump(context->counters.context_fields_dropped, fields.size());
        return;
    }
    detail::retain(node);  // one reference for the layer, one for this object
    detail::push_layer(home, node, node, backtrace, level);
    home_ = &home;
    own_ = node;
    generation_ = home.generation.load(std::memory_order_relaxed);
}

Scope::Scope(const ScopeContext& captured) noexcept {
    detail::ContextNode* const node = captured.node_;
    if (node == nullptr) return;
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) return;
    if (context->busy) {
        detail::ThreadCounters::bump(context->counters.context_fields_dropped, node->field_count);
        return;
    }
    detail::ContextHome& home = *context->home;
    detail::close_queued(home, context->scratch);
    detail::ContextNode* chain;
    if (detail::chain_holds(node, home.top)) {  // the common case: nothing open here, or the capture's own scopes
        detail::retain(node);
        chain = node;
    } else {  // this thread's scopes, then the captured fields: a node of them all on top
        try {
            home.gathered.clear();
            detail::gather_fields(node, nullptr, home.gathered);
        } catch (...) {
            detail::ThreadCounters::bump(context->counters.context_fields_dropped, node->field_count);
            return;
        }
        chain = detail::node_or_parent(home, home.top, home.gathered, context->scratch, &context->counters);
        home.gathered.clear();
    }
    try {
        if (home.layers.size() == home.layers.capacity()) home.layers.reserve(2 * home.layers.size() + 16);
    } catch (...) {
        detail::release(&home, chain);
        return;
    }
    detail::retain(node);
    detail::push_layer(home, node, chain, captured.backtrace_, captured.level_);
    home_ = &home;
    own_ = node;
    generation_ = home.generation.load(std::memory_order_relaxed);
}

// The temporary TraceFields lives until the delegated constructor has copied its values.
Scope::Scope(const TraceContext& trace) noexcept : Scope(std::span<const Field>(detail::TraceFields(trace).fields)) {}

Scope::Scope(const std::optional<TraceContext>& trace) noexcept
    : Scope(trace ? Scope(*trace) : Scope(ScopeContext{})) {}

Scope::~Scope() {
    if (own_ == nullptr) return;
    detail::ThreadContext* context = detail::t_context;
    detail::ContextHome* current = context != nullptr ? context->home : nullptr;
    if (current == home_ && !context->busy) {
        detail::close_queued(*home_, context->scratch);
        detail::close_layer(*home_, own_, context->scratch);
        return;
    }
    // Its thread exited (its scopes closed with it), or it will close this one itself.
    if (home_->generation.load(std::memory_order_acquire) != generation_ || !detail::queue_close(*home_, own_, current))
        detail::release(current, own_);
}

ScopeContext Scope::capture() noexcept {
    detail::ThreadContext* context = detail::this_thread_context();
    if (context == nullptr) return {};
    detail::ContextHome& home = *context->home;
    if (!context->busy) detail::close_queued(home, context->scratch);
    Backtrace backtrace{.records = 0};
    for (auto layer = home.layers.rbegin(); home.backtraces != 0 && layer != home.layers.rend(); ++layer) {
        if (layer->kept != nullptr) {
            backtrace = detail::backtrace_of(*layer->kept);
            break;
        }
    }
    if (home.top == nullptr) return ScopeContext(nullptr, backtrace, std::nullopt);
    detail::retain(home.top);
    return ScopeContext(home.top, backtrace, home.scope_level);
}

}  // namespace fieldlog
