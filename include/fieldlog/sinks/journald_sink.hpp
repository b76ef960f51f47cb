// SPDX-License-Identifier: MIT
// The journald sink: each record becomes one journal entry, sent over journald's native
// protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL) without libsystemd. It sits at the end of the
// record path and takes records in their typed form: every field of the record becomes a field
// of the entry, so that `journalctl -o json` shows them all.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

/// What a record does when journald's queue is full (docs/sinks.md, "journald").
enum class JournaldWhenFull : std::uint8_t {
    wait,  ///< wait for room, at most wait_timeout; then drop the record
    drop,  ///< drop the record at once
};

struct FIELDLOG_API JournaldSinkOptions {
    std::string socket = "/run/systemd/journal/socket";  ///< journald's native socket
    std::string identifier;  ///< SYSLOG_IDENTIFIER; empty: the program's short name
    JournaldWhenFull when_full = JournaldWhenFull::wait;
    std::chrono::milliseconds wait_timeout{10000};  ///< the longest wait for room; above 0

    friend bool operator==(const JournaldSinkOptions&, const JournaldSinkOptions&) = default;
};

/// SinkTarget's hooks (fieldlog/sink_target.hpp): what configure() makes of these options.
FIELDLOG_API std::shared_ptr<Sink> make_sink(const JournaldSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const JournaldSinkOptions& options);

/// Sends each record as one AF_UNIX datagram to options.socket. What a full queue, a stopped
/// journald and a crash do to a record, and why, is in docs/sinks.md ("journald").
///
/// - Records: their parts (SinkInfo::lines false), from the logging thread (async mode: the
///   writer thread). info() names json as its one format: its values are written as the JSON
///   format writes them, and configure() rejects a SinkConfig::format of another kind
///   (ConfigError).
/// - Fields, in this order: PRIORITY (trace and debug 7, info 6, warn 4, error 3, fatal 2),
///   SYSLOG_IDENTIFIER, FIELDLOG_TS (the record's time as the JSON line's `ts`; journald keeps
///   its own receive time too), FIELDLOG_LOGGER, MESSAGE; with Config::caller on CODE_FILE and
///   CODE_LINE (the JSON line's `caller`), with its function CODE_FUNC; with Config::tid TID;
///   then the bound, scope and call fields:
///   - named by the key as the JSON line writes it (`msg` as `fields.msg`), upper-cased, with
///     each byte outside A-Z, 0-9 and _ becoming `_`; a name that is empty or starts with a
///     digit or `_` gets the prefix `F_` (journald ignores client fields starting with `_`);
///     names are cut to 64 characters, journald's limit. `user-id` → USER_ID, `2fa` → F_2FA,
///     `_x` → F__X, `msg` → FIELDS_MSG.
///   - values: a string as its bytes (invalid UTF-8 replaced by U+FFFD, as in JSON), in the
///     binary-safe form when it holds a newline; a number, true, false or null as its JSON
///     text, a time, a duration or bytes as the JSON string's text; an object or array as its
///     compact JSON text. A key given again replaces the earlier field (field.hpp's rule).
///   - two keys that map to one field name (`user-id` and `user_id`) give that field twice,
///     in their order: journald keeps both values.
///   Redaction (Config::redact) and the value cap (Config::max_value_bytes) apply.
/// - Transport: a socket connected to the path (poll(2) tells when journald has room only on
///   a connected datagram socket), its send buffer raised as libsystemd raises it (SO_SNDBUF
///   8 MiB, past net.core.wmem_max with SO_SNDBUFFORCE where the process may). A send that
///   finds journald gone (it restarted: a new socket at the path) connects again and is tried
///   once more. An entry above 64 KiB, or one the kernel refuses as too large (EMSGSIZE), goes
///   as a sealed memfd passed in an empty datagram (SCM_RIGHTS), counted in memfd_entries().
/// - A lost record counts one error and one drop, reported on stderr at most once per second.
///   Nothing but EINTR is retried at once.
/// - Memory: the entry is built in buffers the sink keeps, which grow to the largest record so
///   far and stay; a record allocates nothing once they are that large.
///
/// Construction throws std::invalid_argument for a socket path that is empty or longer than
/// sockaddr_un allows, or a wait_timeout not above 0; std::system_error when the socket cannot
/// be made.
class FIELDLOG_API JournaldSink final : public Sink {
public:
    explicit JournaldSink(JournaldSinkOptions options);
    ~JournaldSink() override;

    /// Sends the record's parts as one journal entry.
    void write(const RecordView& record) override;
    /// The crash path's `fatal` record, as one datagram (async-signal-safe: its wait is poll(2)).
    void write_on_crash(std::span<const RecordView> records) noexcept override;
    void flush() override {}
    [[nodiscard]] SinkInfo info() const override;

    /// Entries sent as a memfd because they were too large for a datagram.
    [[nodiscard]] std::uint64_t memfd_entries() const noexcept;
    [[nodiscard]] const JournaldSinkOptions& options() const noexcept;

private:
    struct FIELDLOG_LOCAL State;  // the implementation: not exported with the class
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog
