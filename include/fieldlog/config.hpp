// SPDX-License-Identifier: MIT
// Configuration: what sinks exist, in which format, at which levels. A plain aggregate a
// program can build in code, or load from TOML (Config::load / Config::parse) with FIELDLOG_*
// environment overrides. configure() swaps the running set atomically while others log.
// This is the cold path: nothing here runs per record.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fieldlog/backtrace.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/export.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

/// Whether records say where they were logged (README: "Call-site facts").
enum class Caller : std::uint8_t {
    off,            ///< nothing (default)
    on,             ///< "caller":"http/server.cpp:142"
    with_function,  ///< and "function":"<the function's name>"
};

/// Whether a console sink writes ANSI colours.
enum class ColourMode : std::uint8_t {
    /// On a terminal (SinkInfo::terminal), unless NO_COLOR is set and not empty (no-color.org);
    /// anywhere when FORCE_COLOR or CLICOLOR_FORCE is set, not empty and not "0". NO_COLOR wins
    /// over both. Read by each configure().
    automatic,
    always,  ///< whatever the destination and the environment say
    never,
};

struct FIELDLOG_API SinkConfig {
    /// The sink's options (`fieldlog::FileSinkOptions{…}`, from the sink's header) or a sink
    /// the program made; the default is one stdout sink.
    SinkTarget target{};
    /// The sink's identity: its label in metrics, and what a later configure() keeps it by (with
    /// an equal target). Empty: its kind and target, like `file:logs/app.log` (README: Metrics).
    /// Two sinks with one name are a ConfigError.
    std::string name{};
    /// Default: Config::format (console is plain off a TTY: see `colour`). A sink that takes one format
    /// only (SinkInfo::format: journald takes json) gets that one; another here is a ConfigError.
    std::optional<Format> format{};
    Level level = Level::trace;      ///< records below this are not sent to this sink
    std::optional<Caller> caller{};  ///< default: Config::caller
    std::optional<bool> tid{};       ///< default: Config::tid
    /// Default: Config::timestamp's layout (the zone is always Config::timestamp's), e.g.
    /// short_time on the console and rfc3339 layouts in the file.
    std::optional<TimestampPrecision> timestamp{};
    ColourMode colour = ColourMode::automatic;  ///< console only
    /// Console only: the logger column (EncoderOptions::logger_width; 0: none).
    std::uint8_t logger_width = default_logger_width;
    /// Which loggers this sink takes (README: Routing by logger): "audit" is that logger and
    /// every one below it ("audit.http"), "payments.*" only those below, "*" all. Empty: every
    /// logger. A logger `exclude` names is never taken, whatever `loggers` says.
    std::vector<std::string> loggers{};
    std::vector<std::string> exclude{};
    /// Where the sink was defined, e.g. `fieldlog.toml:14: sinks[1].path`; configure() starts
    /// its errors about this sink with it. Empty for sinks made in code.
    std::string defined_at{};
};

/// What a caller does when its async ring is full.
enum class OverflowPolicy : std::uint8_t {
    block,  ///< wait for room: no record is lost (the time waited is counted)
    drop,   ///< drop the record and count it: the caller never waits
};

/// Async mode: the caller copies its record's typed form (message, fields with their bytes,
/// references to its context) into a bounded ring of its own thread (single producer, single
/// consumer: no lock, no shared head) and encodes nothing; one writer thread drains every ring,
/// encodes each record once per format in use, and hands the sinks what it finds, in batches.
/// The lines are byte for byte those the caller would have made.
/// - Memory: queue_bytes is **per ring** (docs/async.md: what a record takes, how many rings
///   there are at most); a thread's ring is allocated on its first async record and kept while
///   it lives. The writer allocates nothing after configure() (one record whose lines alone
///   exceed its reserve excepted; the views of parts grow while records gain context fields).
/// - A fmt message is formatted by the caller (its arguments may point at the caller's stack).
/// - Order: a thread's records stay in order. Across threads the writer merges by timestamp
///   what it finds in every ring at one look (a sweep); a record that arrives after that look is
///   written later, even with an earlier timestamp.
/// - A record larger than half a ring is never queued: with `block` the caller writes it
///   to the sinks itself, after its earlier records; with `drop` it is dropped and counted.
/// - flush() and shutdown() (and so normal exit: return from main, exit()) write every record
///   accepted before them. _exit() and quick_exit() lose what is still queued.
struct FIELDLOG_API AsyncConfig {
    bool enabled = false;
    std::size_t queue_bytes = 4 * 1024 * 1024;
    OverflowPolicy overflow = OverflowPolicy::block;
};

/// A per-logger sampler (zap's): within each `interval`, of the records of one logger, level
/// and message text, the first `first` are written, then every `thereafter`-th (0: none more).
/// The next record written carries "suppressed":N, and Metrics::loggers counts the rest.
struct FIELDLOG_API SamplingConfig {
    std::uint32_t first = 100;
    std::uint32_t thereafter = 100;
    std::chrono::nanoseconds interval = std::chrono::seconds(1);
    bool operator==(const SamplingConfig&) const = default;
};

/// Returns the current time of a record; replaceable for tests (golden lines).
using ClockFn = Timestamp (*)() noexcept;

struct FIELDLOG_API Config {
    Level level = Level::info;
    /// Per-logger levels: "db" applies to "db" and "db.*" (the longest match wins).
    std::map<std::string, Level, std::less<>> levels{};
    /// Per-logger samplers, off unless named: "http" applies to "http" and "http.*" (the
    /// longest match wins); "*" to every logger. Each entry has its own counters.
    std::map<std::string, SamplingConfig, std::less<>> sampling{};
    /// Per-logger backtraces (Logger::keep_backtrace), by logger name: that name alone, not its
    /// dotted children (each logger keeps its own). configure() gives each named logger its
    /// backtrace; one whose entry is unchanged keeps what it kept; one the configuration before
    /// named and this one does not has its backtrace ended. `records = 0` ends one set in code;
    /// a logger no configuration names keeps what code gave it.
    std::map<std::string, Backtrace, std::less<>> backtraces{};
    Format format = Format::json;
    TimestampFormat timestamp{};
    DurationFormat duration = DurationFormat::string;
    Caller caller = Caller::off;  ///< for every sink that does not say otherwise
    bool tid = false;             ///< the kernel thread id ("tid") on every record; per sink likewise
    AsyncConfig async{};
    /// The OpenTelemetry resource that every otel-format sink writes, and every OTLP sink without
    /// one of its own sends (TOML `[resource]`): service.name
    /// first, the others in this order; keys unique and not empty. Without `service.name` they write
    /// `"service.name":"unknown_service:<program>"`, as the OpenTelemetry SDKs do. apply_env()
    /// sets the keys OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME name (README: resource).
    std::vector<ResourceAttribute> resource{};
    /// Keys whose values never leave the process: exact names or globs (`*` any run of
    /// bytes), ASCII case-insensitive, like {"password", "*token*"}. At every depth (call,
    /// with() and Scope fields, nested objects, user types, maps), in every format and sink,
    /// the sinks that read parts too, the value is written as "[REDACTED]" and the key stays.
    std::vector<std::string> redact{};
    /// The most bytes one string value is written with; 0 (the default): no cap. A longer one
    /// is cut at a UTF-8 boundary at or below it and ends in `…[truncated N bytes]`, N the
    /// bytes cut. Sinks that read parts get values as logged.
    std::size_t max_value_bytes = 0;
    /// Where records go. Empty (the default) means one stdout sink, so `sinks.push_back(file)`
    /// gives the file alone. To discard every record, give one NullSink.
    std::vector<SinkConfig> sinks{};
    ClockFn clock = nullptr;  ///< nullptr: system_clock time (README: the record's time)
    /// On: configure() takes the crash signals (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) as
    /// install_signal_handlers() would, and SIGTERM/SIGINT where they still have their default
    /// action, so that a crash or a kill loses no accepted record. Off: for a program that owns
    /// its signals. Handlers a configuration installed stay when a later one turns this off.
    bool crash_handlers = true;
    std::string source{};     ///< the file it was loaded from; "" in code

    /// Set by apply_env() (so by load() and from_env()). configure() with a configuration that
    /// never read the environment says once on stderr which FIELDLOG_* variables it leaves unapplied.
    bool environment_applied = false;

    // Precedence: code defaults < file < environment (FIELDLOG_LEVEL, FIELDLOG_FORMAT,
    // OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME), for a configuration that reads it: load(),
    // from_env() or apply_env(). A Config built in code and passed to configure() does not.

    /// Reads the TOML file `path`, then applies the environment (apply_env). Throws
    /// ConfigError. The schema, with every key explained: examples/fieldlog.toml.
    static Config load(const std::string& path);
    /// Parses TOML text; `source` names it in error messages. Throws ConfigError.
    static Config parse(std::string_view toml, std::string_view source = "<string>");
    /// The configuration from the environment alone: FIELDLOG_CONFIG (a file), then the
    /// variables apply_env() reads. Throws ConfigError.
    static Config from_env();
    /// Applies FIELDLOG_LEVEL / FIELDLOG_FORMAT on top of this configuration (throws
    /// ConfigError when one is malformed), then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
    /// to `resource` (a malformed one is ignored and said on stderr, as the SDKs do).
    Config& apply_env();
};

/// A rejected configuration; what() names the file, line and key.
class FIELDLOG_API ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Replaces the running configuration from any thread, while others log, without a lock on
/// their path: every record goes wholly to the old sink set or wholly to the new one; sinks
/// the new set keeps (the same name and an equal SinkTarget) are reused, not reopened, and keep
/// their counters; the others are flushed and closed after their last writer is done.
/// Throws ConfigError when a sink cannot be made (a file that cannot be opened, an address
/// that does not resolve); then nothing changes and the running configuration stays in force.
/// We throw rather than return a status so that a bad configuration at start-up cannot be
/// ignored by accident; a program that reconfigures at run time catches it and carries on.
FIELDLOG_API void configure(const Config& config);

/// Configures again from the file last given to Config::load or FIELDLOG_CONFIG (what SIGHUP
/// does once install_signal_handlers() ran). Throws ConfigError; the running set then stays.
/// Sinks the new configuration keeps are reopened, so a file logrotate moved is let go.
FIELDLOG_API void reload();

/// Reopens every running sink's file without reading any configuration: what a service with
/// no config file wires to SIGHUP after logrotate. Errors are counted per sink, never thrown.
FIELDLOG_API void reopen_files();

/// The levels in force, in FIELDLOG_LEVEL's syntax: the global level, then `name=level` for
/// each name with a level of its own, by name ("info,db=debug,http.client=warn"). What a
/// service's GET /loglevel answers.
FIELDLOG_API std::string levels();

/// Sets levels at run time from FIELDLOG_LEVEL's syntax ("debug", "info,db=trace"): a bare
/// level is the global one, `name=level` sets that name and the names below it without a
/// level of their own (as Logger::set_level does). Replaces every level set at run time
/// before (by set_level or an earlier call); "" clears them, so the configuration's levels
/// hold again. Kept across configure() and reload(). Throws ConfigError ("set_levels: …")
/// and changes nothing when an entry is malformed.
FIELDLOG_API void set_levels(std::string_view spec);

/// Flushes every sink; in async mode first waits until every record logged before the call
/// has been handed to the sinks.
FIELDLOG_API void flush();

/// Ends every sink, the program's own too, each within its close bound (Sink::begin_close;
/// docs/reliability.md), all at once; later records are dropped. Normal exit ends the sinks
/// the same way, and keeps them for records logged after it.
FIELDLOG_API void shutdown();

/// The signal groups install_signal_handlers() takes. A group left off is never touched: its
/// signals keep whatever the application set.
struct FIELDLOG_API SignalOptions {
    bool crash = true;      ///< SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL: the final flush and `fatal` record
    bool terminate = true;  ///< SIGTERM, SIGINT: a flush first
    bool reload = true;     ///< SIGHUP: reload() or reopen_files()
};

/// Opt-in signal handling for the whole process, by group (call it again in a forked child;
/// a later call may take more groups, a signal taken already is left as it is):
/// - SIGHUP (`reload`): reload() when a configuration file was loaded, else reopen_files();
///   done on a helper thread, never in the handler.
/// - SIGTERM, SIGINT (`terminate`): every sink ends within its close bound, on the helper
///   thread, then the signal again with its default action (the process ends as it would have).
/// - SIGSEGV, SIGABRT (so std::terminate), SIGBUS, SIGFPE, SIGILL (`crash`): every accepted
///   record reaches the sinks — the async writer thread hands out what it can within a second,
///   then each sink's Sink::write_on_crash (async-signal-safe calls only) writes what it buffered
///   and the rest — then one `fatal` record naming the signal, with the crashing thread's stack
///   (and std::terminate's uncaught exception, noted by a terminate handler this group
///   installs), goes to each sink with that crash hook (stdout, file, UDP, journald); then the
///   signal again, so the exit status and core dump are the original's. Each thread that logs has an alternate signal stack from its first record, so
///   a stack overflow is handled too.
/// Once either final path has begun, logging calls on other threads no longer return (a call
/// that returned was written). Both are bounded by alarm(3): if the sinks hang, the process
/// still ends by the original signal.
/// Handlers installed before are chained: our flush runs first, then the previous action gets
/// the signal with its own flags (sa_mask, SA_NODEFER, SA_RESETHAND, SA_SIGINFO; our SA_RESTART
/// follows its). Crash: it is restored (SIG_IGN as SIG_DFL) and the signal delivered again.
/// SIGTERM/SIGINT with a handler or SIG_IGN before: the process lives on, so the flush leaves
/// logging open and is waited for (at most 3 s) before that handler is called. SIGHUP: the
/// reload is asked for, then the handler is called. A runtime that uses SIGSEGV itself (a JVM,
/// wasm guard pages) must leave `crash` off: its first handled fault would halt logging for good.
FIELDLOG_API void install_signal_handlers(SignalOptions options = {});

}  // namespace fieldlog
