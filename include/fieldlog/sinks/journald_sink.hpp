// SPDX-License-Identifier: MIT
// The journald sink: each record becomes one journal entry, sent over journald's native
// protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL) without libsystemd. It sits at the end of the
// record path and takes JSON lines only: it turns the line's top-level members into journal
// fields, so that `journalctl -o json` shows every field of the record as a field of the entry.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"
#include "fieldlog/sink_target.hpp"

namespace fieldlog {

struct FIELDLOG_API JournaldSinkOptions {
    std::string socket = "/run/systemd/journal/socket";  ///< journald's native socket
    std::string identifier;  ///< SYSLOG_IDENTIFIER; empty: program_invocation_short_name

    friend bool operator==(const JournaldSinkOptions&, const JournaldSinkOptions&) = default;
};

/// SinkTarget's hooks (fieldlog/sink_target.hpp): what configure() makes of these options.
FIELDLOG_API std::shared_ptr<Sink> make_sink(const JournaldSinkOptions& options);
FIELDLOG_API SinkDestination sink_destination(const JournaldSinkOptions& options);

/// Sends each record as one AF_UNIX datagram to options.socket, never blocking the caller.
///
/// - Format: JSON only. info() says so, and configure() gives the sink JSON records whatever
///   Config::format is, and rejects a SinkConfig::format of another kind (ConfigError).
/// - Fields, from the line's top-level members, in their order, after PRIORITY and
///   SYSLOG_IDENTIFIER:
///   - `msg` → MESSAGE, `logger` → FIELDLOG_LOGGER, `ts` → FIELDLOG_TS (journald keeps its own
///     receive time too); `level` is PRIORITY (trace and debug 7, info 6, warn 4, error 3,
///     fatal 2), not a field of its own; `caller` ("file:line") → CODE_FILE and CODE_LINE,
///     `function` → CODE_FUNC.
///   - every other member → a field named by upper-casing the key, with each byte outside
///     A-Z, 0-9 and _ becoming `_`; a name that is empty or starts with a digit or `_` gets the
///     prefix `F_` (journald ignores client fields starting with `_`); names are cut to 64
///     characters, journald's limit. `user-id` → USER_ID, `2fa` → F_2FA, `_x` → F__X.
///   - values: a string as its raw bytes (JSON escapes undone; the encoder has already replaced
///     invalid UTF-8 by U+FFFD), in the binary-safe form when it holds a newline; a number,
///     true, false or null as its JSON text; an object or array as its compact JSON text.
///   - two members whose names map to one field name (`user-id` and `user_id`) give that
///     field twice, in their order: journald keeps both values (a line never repeats a key).
///   A line that is not a JSON object (not one of ours) is sent whole as MESSAGE.
/// - Transport: an unconnected socket, each datagram addressed to the path, so a journald that
///   restarts (a new socket at the same path) is reached again by the next record. An entry
///   above 64 KiB, or one the kernel refuses as too large (EMSGSIZE), goes as a sealed memfd
///   passed in an empty datagram (SCM_RIGHTS), counted in memfd_entries().
/// - A missing or restarting journald (ENOENT, ECONNREFUSED) or a full queue (EAGAIN) drops
///   that record: one error and one drop each, reported on stderr at most once per second.
///   Nothing but EINTR is retried and the caller never blocks.
/// - Memory: one entry buffer, 64 KiB at construction, grown (doubled, and to at least twice
///   the line) only for an entry that does not fit, so for a record larger than any before;
///   nothing per record. The crash path has a 16 KiB buffer of its own.
///
/// Construction throws std::invalid_argument for a socket path that is empty or longer than
/// sockaddr_un allows, std::system_error when the socket cannot be made.
class FIELDLOG_API JournaldSink final : public Sink {
public:
    explicit JournaldSink(JournaldSinkOptions options);
    ~JournaldSink() override;

    void write(const RecordView& record) override;
    void flush() override {}
    /// Crash path: the same entries from a buffer of their own, as datagrams only (a record
    /// whose entry would not fit in 16 KiB is skipped); async-signal-safe.
    void write_on_crash(std::span<const RecordView> records) noexcept override;
    [[nodiscard]] SinkInfo info() const override;

    /// Entries sent as a memfd because they were too large for a datagram.
    [[nodiscard]] std::uint64_t memfd_entries() const noexcept;
    [[nodiscard]] const JournaldSinkOptions& options() const noexcept;

private:
    struct FIELDLOG_LOCAL State;  // the implementation: not exported with the class
    std::unique_ptr<State> state_;
};

}  // namespace fieldlog
