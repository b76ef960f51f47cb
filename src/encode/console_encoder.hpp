// The console format, for people at a terminal:
//   2026-11-30T08:38:11.123456789Z INFO  http: request done                  status=200 ok=true
// time, level (upper case, padded), logger, the message padded to a fixed column when fields
// follow, then the same ` key=value` fields as logfmt. With EncoderOptions::colour the level is
// wrapped in an ANSI colour; fields are never coloured, so bound and scope bytes are shared.
// Control characters (C0, DEL and C1) are always escaped: a log line cannot drive the terminal.
#pragma once

#include <cstddef>

#include "encode/logfmt_encoder.hpp"

namespace fieldlog::detail {

class ConsoleEncoder final : public KeyValueEncoder {
public:
    /// The column (in code points after the logger) fields start at when the message is shorter.
    static constexpr std::size_t kMessageWidth = 40;

    ConsoleEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options) noexcept
        : KeyValueEncoder(out, scratch, options, true) {}

    /// Appends one whole record, ending in '\n'.
    void record(const RecordInput& record);
};

/// Appends free text (message, logger name) for a terminal: quotes and backslashes as they are,
/// control characters escaped as in JSON (C1 too), invalid UTF-8 replaced by U+FFFD.
void append_console_text(Buffer& out, std::string_view text);

}  // namespace fieldlog::detail
