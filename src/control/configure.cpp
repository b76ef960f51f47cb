// configure(), flush(), shutdown(): build a new Pipeline from a Config, publish it with one
// atomic exchange, wait until no thread still reads the old one, then close the sinks the new
// one did not keep. Records in flight finish on the pipeline they started with.
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "control/state.hpp"

namespace fieldlog {
namespace detail {
namespace {

std::shared_ptr<Sink> make_sink(const SinkTarget& target, std::string& kind, std::string& where) {
    if (const auto* std_stream = std::get_if<StdoutSinkOptions>(&target)) {
        kind = std_stream->stream == StdStream::out ? "stdout" : "stderr";
        return std::make_shared<StdoutSink>(std_stream->stream);
    }
    if (const auto* file = std::get_if<FileSinkOptions>(&target)) {
        kind = "file";
        where = file->path;
        try {
            return std::make_shared<FileSink>(*file);
        } catch (const std::system_error& e) {
            throw ConfigError("file sink '" + file->path + "': " + e.what());
        }
    }
    if (const auto* udp = std::get_if<UdpSinkOptions>(&target)) {
        kind = "udp";
        where = udp->address;
        try {
            return std::make_shared<UdpSink>(*udp);
        } catch (const std::exception& e) {
            throw ConfigError("udp sink '" + udp->address + "': " + e.what());
        }
    }
    const auto& custom = std::get<std::shared_ptr<Sink>>(target);
    if (!custom) throw ConfigError("sink list holds an empty std::shared_ptr<Sink>");
    kind = dynamic_cast<const NullSink*>(custom.get()) != nullptr     ? "null"
           : dynamic_cast<const MemorySink*>(custom.get()) != nullptr ? "memory"
                                                                       : "custom";
    return custom;
}

std::unique_ptr<Pipeline> build_pipeline(const Config& config, const Pipeline* previous) {
    auto pipeline = std::make_unique<Pipeline>();
    pipeline->clock = config.clock;
    for (const SinkConfig& sink_config : config.sinks) {
        std::shared_ptr<SinkHandle> handle;
        for (const auto& candidate : pipeline->handles) {  // the same sink twice in one config
            if (candidate->origin == sink_config.target) handle = candidate;
        }
        if (!handle && previous != nullptr) {
            for (const auto& candidate : previous->handles) {
                if (candidate->origin == sink_config.target) handle = candidate;
            }
        }
        if (!handle) {
            handle = std::make_shared<SinkHandle>();
            handle->sink = make_sink(sink_config.target, handle->kind, handle->target);
            handle->origin = sink_config.target;
        }
        if (std::find(pipeline->handles.begin(), pipeline->handles.end(), handle) == pipeline->handles.end()) {
            pipeline->handles.push_back(handle);
        }

        EncoderOptions options{.format = sink_config.format.value_or(config.format),
                               .timestamp = config.timestamp,
                               .duration = config.duration};
        options.colour = options.format == Format::console && handle->sink->is_terminal();
        auto channel = std::find_if(pipeline->channels.begin(), pipeline->channels.end(),
                                    [&](const Channel& c) { return c.options == options; });
        if (channel == pipeline->channels.end()) {
            pipeline->channels.push_back(Channel{.options = options, .min_level = Level::off, .routes = {}});
            channel = pipeline->channels.end() - 1;
        }
        channel->routes.push_back(Route{handle.get(), sink_config.level});
        channel->min_level = std::min(channel->min_level, sink_config.level);
        pipeline->min_level = std::min(pipeline->min_level, sink_config.level);
    }
    return pipeline;
}

/// Closes the sinks of `old` that `next` does not use, then frees `old`.
void retire(std::unique_ptr<Pipeline> old, const Pipeline* next) {
    if (!old) return;
    wait_for_readers(old.get());
    for (const auto& handle : old->handles) {
        const bool kept = next != nullptr &&
                          std::find(next->handles.begin(), next->handles.end(), handle) != next->handles.end();
        const std::lock_guard lock(handle->mutex);
        if (kept) {
            handle->sink->flush();
        } else {
            handle->sink->close();
        }
    }
}

void shutdown_at_exit() { shutdown(); }

/// Publishes `config` (caller holds configure_mutex). Throws ConfigError, changing nothing.
void apply(State& s, const Config& config) {
    std::unique_ptr<Pipeline> next = build_pipeline(config, s.current.load(std::memory_order_acquire));
    {
        const std::lock_guard lock(s.loggers_mutex);
        for (const auto& [name, core] : s.loggers) {
            if (!core->pinned.load(std::memory_order_relaxed)) {
                core->threshold.store(level_for(config, name), std::memory_order_relaxed);
            }
        }
    }
    s.config = config;
    if (!config.source.empty()) s.config_path = config.source;
    const Pipeline* next_raw = next.get();
    std::unique_ptr<Pipeline> old(s.current.exchange(next.release(), std::memory_order_seq_cst));
    s.shut_down.store(false, std::memory_order_relaxed);
    if (!s.configured.exchange(true)) std::atexit(shutdown_at_exit);
    retire(std::move(old), next_raw);
}

}  // namespace

void ensure_configured() {
    State& s = state();
    if (s.configured.load(std::memory_order_acquire)) return;
    const std::lock_guard lock(s.configure_mutex);
    if (s.configured.load(std::memory_order_acquire)) return;
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
    configure(Config::load(path));
}

void flush() {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);  // the pipeline cannot be retired meanwhile
    if (const detail::Pipeline* pipeline = s.current.load(std::memory_order_acquire)) pipeline->flush();
}

void shutdown() {
    detail::State& s = detail::state();
    const std::lock_guard lock(s.configure_mutex);
    if (s.shut_down.exchange(true)) return;
    detail::retire(std::unique_ptr<detail::Pipeline>(s.current.exchange(nullptr, std::memory_order_seq_cst)), nullptr);
}

}  // namespace fieldlog
