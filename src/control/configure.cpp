// SPDX-License-Identifier: MIT
// configure(), flush(), shutdown(): build a new Pipeline from a Config, publish it with one
// atomic exchange, wait until no thread still reads the old one, then close the sinks the new
// one did not keep. Records in flight finish on the pipeline they started with.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <set>
#include <vector>

#include "base/platform.hpp"
#include "control/crash.hpp"
#include "control/fork.hpp"
#include "control/state.hpp"
#include "fieldlog/sinks/otlp_sink.hpp"
#include "dispatch/sink_calls.hpp"
#include "record/backtrace.hpp"
#include "record/thread_registry.hpp"

namespace fieldlog {
namespace detail {
namespace {

/// `"<path>"` or `"<name>"` for error messages.
std::string in_quotes(const std::string& text) { return '"' + text + '"'; }

/// What errors about a sink start with: where it was defined (`fieldlog.toml:14: sinks[1].path`)
/// or, for sinks made in code, `sinks[<index>]`.
std::string sink_location(const SinkConfig& sink_config, std::size_t index) {
    return sink_config.defined_at.empty() ? "sinks[" + std::to_string(index) + "]" : sink_config.defined_at;
}

/// Makes the sink `target` (sink_config's, as worked out) describes; what stops it is a
/// ConfigError naming the sink.
std::shared_ptr<Sink> make_sink(const SinkTarget& target, const SinkConfig& sink_config, std::size_t index) {
    try {
        return target.make();
    } catch (const std::exception& e) {
        throw ConfigError(sink_location(sink_config, index) + ": " + e.what());
    }
}

/// The format `handle`'s sink gets: the one it takes, if it takes one only, else its own
/// SinkConfig::format or the configuration's.
Format format_for(const SinkConfig& sink_config, const SinkHandle& handle, Format config_format, std::size_t index) {
    const std::optional<Format> only = handle.info.format;
    if (!only) return sink_config.format.value_or(config_format);
    if (sink_config.format && *sink_config.format != *only) {
        throw ConfigError(sink_location(sink_config, index) + ": a " + std::string(handle.info.kind) + " sink takes " +
                          std::string(to_string(*only)) + " records only, not " +
                          std::string(to_string(*sink_config.format)));
    }
    return *only;
}

/// The environment variable `name` when set and not empty, else nullptr.
const char* set_in_environment(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

/// Whether a console sink gets colour: ColourMode's rule, with the environment as it is now.
bool wants_colour(ColourMode mode, bool terminal) {
    switch (mode) {
        case ColourMode::always: return true;
        case ColourMode::never: return false;
        case ColourMode::automatic: break;
    }
    if (set_in_environment("NO_COLOR") != nullptr) return false;
    for (const char* name : {"FORCE_COLOR", "CLICOLOR_FORCE"}) {
        const char* value = set_in_environment(name);
        if (value != nullptr && std::string_view(value) != "0") return true;
    }
    return terminal;
}

/// Config::resource as the otel sinks write it: checked, service.name first, the SDKs' default
/// (`unknown_service:` and the program's name) when it has none.
std::vector<ResourceAttribute> otel_resource(const Config& config) {
    const std::string where = config.source.empty() ? std::string("resource") : config.source + ": resource";
    bool named = false;
    for (std::size_t i = 0; i < config.resource.size(); ++i) {
        const std::string& key = config.resource[i].key;
        if (key.empty()) throw ConfigError(where + ": an attribute with an empty key");
        for (std::size_t j = 0; j < i; ++j) {
            if (config.resource[j].key == key) throw ConfigError(where + ".\"" + key + "\": given twice");
        }
        named = named || key == "service.name";
    }
    std::vector<ResourceAttribute> resource = config.resource;
    std::stable_partition(resource.begin(), resource.end(),
                          [](const ResourceAttribute& attribute) { return attribute.key == "service.name"; });
    if (!named) resource.insert(resource.begin(), ResourceAttribute{"service.name", unknown_service_name()});
    return resource;
}

/// What configure() makes a sink from: its target, where an OTLP sink without a resource of its
/// own gets the configuration's, so that a process has one resource, as with an SDK.
SinkTarget with_process_resource(const SinkTarget& target, const Config& config) {
    const OtlpSinkOptions* otlp = target.options<OtlpSinkOptions>();
    if (otlp == nullptr || !otlp->resource.empty()) return target;
    OtlpSinkOptions given = *otlp;
    given.resource = otel_resource(config);
    return given;
}

/// The encoder options of one sink. Options only the console format reads keep their defaults
/// in the others, so sinks of one format that differ in them alone share one channel.
EncoderOptions options_for(const Config& config, const SinkConfig& sink_config, const SinkHandle& handle,
                           std::size_t index) {
    EncoderOptions options{.format = format_for(sink_config, handle, config.format, index),
                           .timestamp = {.precision = sink_config.timestamp.value_or(config.timestamp.precision),
                                         .zone = config.timestamp.zone},
                           .duration = config.duration};
    options.redact = config.redact;
    options.max_value_bytes = config.max_value_bytes;
    const Caller caller = sink_config.caller.value_or(config.caller);
    options.call_facts = static_cast<std::uint8_t>((caller != Caller::off ? caller_fact : 0) |
                                                   (caller == Caller::with_function ? function_fact : 0) |
                                                   (sink_config.tid.value_or(config.tid) ? thread_id_fact : 0));
    if (options.format == Format::console) {
        options.colour = wants_colour(sink_config.colour, handle.info.terminal);
        options.logger_width = sink_config.logger_width;
    }
    if (options.format == Format::otel) options.resource = otel_resource(config);
    return options;
}

/// `kind` or `kind:target` (`stdout`, `file:logs/app.log`, `memory`): what a sink is called
/// when its SinkConfig gives it no name.
std::string kind_and_target(const SinkTarget& target) {
    const SinkDestination destination = target.destination();
    return destination.target.empty() ? std::string(destination.kind)
                                      : std::string(destination.kind) + ':' + destination.target;
}

/// Every sink's name, in order: its own (SinkConfig::name), else its kind and target; a sink
/// that shares those with an earlier unnamed one in another format gets its format appended
/// (`udp:127.0.0.1:5140/logfmt`), and one whose name is still taken its count (`memory#2`). So
/// a made-up name never collides and an added sink renames none before it; a name given twice
/// is a ConfigError naming both.
std::vector<std::string> sink_names(const std::vector<SinkConfig>& sinks, Format config_format) {
    std::vector<std::string> names(sinks.size());
    std::set<std::string, std::less<>> taken;
    for (std::size_t index = 0; index < sinks.size(); ++index) {
        const std::string& name = sinks[index].name;
        if (name.empty()) continue;
        for (std::size_t earlier = 0; earlier < index; ++earlier) {
            if (sinks[earlier].name == name) {
                throw ConfigError(sink_location(sinks[index], index) + ": the name " + in_quotes(name) + " is taken by " +
                                  sink_location(sinks[earlier], earlier));
            }
        }
        names[index] = name;
        taken.insert(name);
    }
    std::vector<std::string> bases(sinks.size());
    for (std::size_t index = 0; index < sinks.size(); ++index) {
        if (!names[index].empty()) continue;
        bases[index] = kind_and_target(sinks[index].target);
        const Format format = sinks[index].format.value_or(config_format);
        std::string name = bases[index];
        for (std::size_t earlier = 0; earlier < index; ++earlier) {
            if (bases[earlier] == bases[index] && sinks[earlier].format.value_or(config_format) != format) {
                name += '/' + std::string(to_string(format));
                break;
            }
        }
        const std::string stem = name;
        for (int count = 2; taken.contains(name); ++count) name = stem + '#' + std::to_string(count);
        taken.insert(name);
        names[index] = std::move(name);
    }
    return names;
}

/// The sink's SinkConfig::loggers and exclude, checked.
LoggerFilter logger_filter(const SinkConfig& sink, std::size_t index) {
    const auto checked = [&](const std::vector<std::string>& patterns, std::string_view key) {
        for (std::size_t i = 0; i < patterns.size(); ++i) {
            if (const std::string_view problem = LoggerFilter::check(patterns[i]); !problem.empty()) {
                throw ConfigError(sink_location(sink, index) + ": " + std::string(key) + "[" + std::to_string(i) + "] " +
                                  in_quotes(patterns[i]) + " " + std::string(problem));
            }
        }
        return patterns;
    };
    return LoggerFilter{.take = checked(sink.loggers, "loggers"), .exclude = checked(sink.exclude, "exclude")};
}

std::unique_ptr<Pipeline> build_pipeline(const Config& config, const Pipeline* previous, bool flush_each_record) {
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->clock = config.clock;
    pipeline->redact = config.redact;
    pipeline->flush_each_record = flush_each_record;
    RoutingTable& routing = pipeline->routing;
    static const std::vector<SinkConfig> default_sinks{SinkConfig{}};  // Config::sinks empty: one stdout sink
    const std::vector<SinkConfig>& sinks = config.sinks.empty() ? default_sinks : config.sinks;
    const std::vector<std::string> names = sink_names(sinks, config.format);
    for (std::size_t index = 0; index < sinks.size(); ++index) {
        const SinkConfig& sink_config = sinks[index];
        for (std::size_t earlier = 0; earlier < index; ++earlier) {
            if (sinks[earlier].target.shares_destination(sink_config.target)) {
                throw ConfigError(sink_location(sink_config, index) + ": writes where " + sink_location(sinks[earlier], earlier) +
                                  " does (" + in_quotes(names[earlier]) +
                                  "): a stream, a file or a Sink object takes one place in the list");
            }
        }
        const SinkTarget target = with_process_resource(sink_config.target, config);
        std::shared_ptr<SinkHandle> handle;
        if (previous != nullptr) {
            for (const auto& candidate : previous->routing.sinks) {
                if (candidate->name == names[index] && candidate->origin == target) handle = candidate;
            }
        }
        if (!handle) handle = std::make_shared<SinkHandle>(make_sink(target, sink_config, index), target, names[index]);
        routing.add(handle, options_for(config, sink_config, *handle, index), sink_config.level,
                    logger_filter(sink_config, index));
    }
    for (const auto& [name, sampling] : config.sampling) {
        if (sampling.interval.count() <= 0) {
            throw ConfigError("sampling " + in_quotes(name) + ": the interval must be positive");
        }
        pipeline->samplers.emplace_back(name, std::make_unique<Sampler>(sampling));
    }
    pipeline->seal_rules();
    if (config.async.enabled) {
        reserve_final_storage();
        pipeline->writer = std::make_unique<AsyncWriter>(*pipeline, config.async);
    }
    return pipeline;
}

/// Retires `old`: once its last reader left and its writer wrote everything queued, its sinks
/// end or get a last flush, and then it is freed. At the end of logging (`every_sink_ends`:
/// shutdown(), exit) every sink ends; else the sinks configure() made that `next` does not
/// keep end (freed with `old`, their destructors find nothing left), and the others, kept or
/// the program's own (it may configure them again), are flushed.
void retire(std::unique_ptr<Pipeline> old, const Pipeline* next, bool every_sink_ends) {
    if (!old) return;
    wait_for_readers(old.get());
    if (old->writer) {  // everything it queued reaches the sinks first
        old->writer->stop();
        ThreadRegistry& r = thread_registry();
        const std::lock_guard lock(r.mutex);
        accumulate(r.retired.async, old->writer->metrics());
    }
    std::vector<Sink*> ending;
    std::vector<Sink*> flushed;
    for (const auto& handle : old->routing.sinks) {
        const bool kept = next != nullptr && std::find(next->routing.sinks.begin(), next->routing.sinks.end(), handle) !=
                                                 next->routing.sinks.end();
        const bool made_here = handle->origin.sink() == nullptr;
        (every_sink_ends || (made_here && !kept) ? ending : flushed).push_back(handle->sink.get());
    }
    close_and_flush(ending, flushed);
}

/// A logger whose backtrace a configuration changes, and its new one.
struct BacktraceChange {
    LoggerCore* logger;
    Backtrace backtrace;
};

/// What `config.backtraces` changes from the configuration in force: each entry that is new or
/// differs, and an end for each logger the one in force named and `config` does not. Registers
/// the loggers and makes their stores, so that applying the changes cannot throw. Throws
/// ConfigError on an entry that is not a logger name or keeps no level below its trigger.
std::vector<BacktraceChange> backtrace_changes(State& s, const Config& config) {
    std::vector<BacktraceChange> changes;
    for (const auto& [name, backtrace] : config.backtraces) {
        if (!name.empty() && (name == "*" || name.ends_with(".*") || !LoggerFilter::check(name).empty())) {
            throw ConfigError("backtraces " + in_quotes(name) +
                              ": not a logger name (like \"http\" or \"db.pool\"; \"\" is the root logger)");
        }
        if (backtrace.records != 0 && (backtrace.keep_from >= backtrace.trigger || backtrace.trigger == Level::off)) {
            throw ConfigError("backtraces " + in_quotes(name) +
                              ": keep_from must be below trigger, and trigger a level (records = 0 keeps none)");
        }
        const auto before = s.config.backtraces.find(name);
        if (before == s.config.backtraces.end() || !(before->second == backtrace))
            changes.push_back({&logger_core(s, name), backtrace});
    }
    for (const auto& [name, backtrace] : s.config.backtraces) {
        if (!config.backtraces.contains(name)) changes.push_back({&logger_core(s, name), Backtrace{.records = 0}});
    }
    for (const BacktraceChange& change : changes) logger_backtrace_store(*change.logger);
    return changes;
}

/// Gives each logger of `changes` its backtrace. Not from inside a logging call (a sink that
/// configures), where this thread may hold a logger's backtrace: as Logger::keep_backtrace.
void apply_backtraces(const std::vector<BacktraceChange>& changes) noexcept {
    ThreadContext* context = this_thread_context();
    if (context == nullptr || context->busy) return;
    for (const BacktraceChange& change : changes) {
        try {
            set_logger_backtrace(*context->home, *change.logger, change.backtrace);
        } catch (const std::bad_alloc&) {  // cannot happen: backtrace_changes made each store
        }
    }
}

void finish_at_exit();

/// Publishes `config` (caller holds configure_mutex). Throws ConfigError, changing nothing.
/// `at_exit`: the pipeline after normal exit (finish_at_exit).
void apply(State& s, const Config& config, bool at_exit = false) {
    const std::vector<BacktraceChange> backtraces = backtrace_changes(s, config);  // before any sink opens
    std::unique_ptr<Pipeline> next =
        build_pipeline(config, g_current_pipeline.load(std::memory_order_acquire), at_exit);
    // Everything that can throw happens before the first visible change.
    Config in_force = config;
    std::string path = config.source.empty() ? s.config_path : config.source;
    s.config = std::move(in_force);
    s.config_path = std::move(path);
    refresh_levels(s);
    apply_backtraces(backtraces);
    Pipeline* next_raw = next.get();
    const Pipeline* previous = g_current_pipeline.load(std::memory_order_acquire);
    if (previous != nullptr && previous->writer && !next_raw->writer) next_raw->set_open(false);
    std::unique_ptr<Pipeline> old(g_current_pipeline.exchange(next.release(), std::memory_order_seq_cst));
    s.shut_down.store(false, std::memory_order_relaxed);
    if (!s.configured.exchange(true)) {
        std::atexit(finish_at_exit);
        register_fork_handlers();
    }
    retire(std::move(old), next_raw, at_exit);
    set_pool_retained_bound(next_raw->writer ? next_raw->writer->capacity() : 0);
    if (config.crash_handlers) install_crash_handlers();
    report_unapplied_environment(config);
    // Only now: a sink both pipelines share gets all of the old pipeline's records first.
    if (next_raw->writer) next_raw->writer->start();
    next_raw->set_open(true);
}

/// Normal exit (atexit): everything queued is written and every sink ends (Sink::begin_close):
/// each delivers what it holds within its bound, and drops, counts and reports the rest. The
/// same sinks then stay behind a synchronous pipeline that flushes after each record. A record
/// logged later — from a static destructor, a later atexit handler, a thread still running — is
/// on its way out before the call returns, within what is left of its sink's bound; the kernel
/// closes the files when the process ends.
void finish_at_exit() {
    State& s = state();
    const std::lock_guard lock(s.configure_mutex);
    if (s.shut_down.load(std::memory_order_relaxed)) return;  // shutdown() already closed everything
    Config last = s.config;
    last.async.enabled = false;
    try {
        apply(s, last, true);
    } catch (...) {  // a sink could not be kept (it cannot be: apply reuses them): end what runs
        if (const Pipeline* pipeline = g_current_pipeline.load(std::memory_order_acquire)) {
            std::vector<Sink*> ending;
            for (const auto& handle : pipeline->routing.sinks) ending.push_back(handle->sink.get());
            close_and_flush(ending, {});
        }
    }
}

/// Reopens the sinks of `pipeline` (caller holds configure_mutex); with `kept_from`, only those
/// that pipeline also had: a sink made just now has nothing to let go.
void reopen_sinks(const Pipeline* pipeline, const std::vector<std::shared_ptr<SinkHandle>>* kept_from = nullptr) {
    if (pipeline == nullptr) return;
    for (const auto& handle : pipeline->routing.sinks) {
        if (kept_from != nullptr && std::find(kept_from->begin(), kept_from->end(), handle) == kept_from->end()) continue;
        const std::lock_guard lock(handle->sink->mutex());
        reopen_sink(*handle->sink);
    }
}

}  // namespace

void ensure_configured() {
    State& s = state();
    if (s.configured.load(std::memory_order_acquire)) return;
    const std::lock_guard lock(s.configure_mutex);
    // shutdown() before any configuration is a decision too: no default stdout pipeline after it.
    if (s.configured.load(std::memory_order_acquire) || s.shut_down.load(std::memory_order_relaxed)) return;
    try {
        apply(s, Config::from_env());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fieldlog: %s; logging JSON to stdout at level info instead\n", e.what());
        apply(s, Config{});
    }
}

}  // namespace detail

void configure(const Config& config) {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    detail::apply(s, config);
}

void reload() {
    detail::State& s = detail::state();
    std::string path;
    {
        const std::lock_guard lock(s.configure_mutex);
        path = s.config_path;
    }
    if (path.empty()) throw ConfigError("reload: no configuration file was loaded (set FIELDLOG_CONFIG or use Config::load)");
    const Config config = Config::load(path);
    const std::lock_guard lock(s.configure_mutex);
    std::vector<std::shared_ptr<detail::SinkHandle>> before;
    if (const detail::Pipeline* current = detail::g_current_pipeline.load(std::memory_order_acquire)) {
        before = current->routing.sinks;
    }
    detail::apply(s, config);
    detail::reopen_sinks(detail::g_current_pipeline.load(std::memory_order_acquire), &before);
}

void reopen_files() {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    detail::reopen_sinks(detail::g_current_pipeline.load(std::memory_order_acquire));
}

void flush() {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);  // the pipeline cannot be retired meanwhile
    if (const detail::Pipeline* pipeline = detail::g_current_pipeline.load(std::memory_order_acquire)) {
        pipeline->flush();
    }
}

void shutdown() {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    if (s.shut_down.exchange(true)) return;
    detail::Pipeline* const last = detail::g_current_pipeline.exchange(nullptr, std::memory_order_seq_cst);
    detail::retire(std::unique_ptr<detail::Pipeline>(last), nullptr, true);
}

}  // namespace fieldlog
