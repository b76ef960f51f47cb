// SPDX-License-Identifier: MIT
// The console format, for people at a terminal:
//   2026-11-30T08:38:11.123456789Z INFO  http:         request done            status=200 ok=true
//       a second line of the message
// time, level (upper case, padded), the logger in a fixed-width column, the message (its first
// line) padded to a fixed column when fields follow, then the same ` key=value` fields as
// logfmt; the message's further lines follow, indented. With EncoderOptions::colour the time
// and keys are dim, the level coloured by severity and the message bold; keys are coloured in
// bound and scope bytes too, which are encoded per set of options. Control characters (C0 but
// the newlines above, DEL and C1) are always escaped: a log line cannot drive the terminal, and
// a line that does not start with the indent starts a record.
#pragma once

#include <cstddef>
#include <string_view>

#include "encode/logfmt_encoder.hpp"

namespace fieldlog::detail {

class ConsoleEncoder final : public KeyValueEncoder {
public:
    /// The column (in code points after the logger) fields start at when the message is shorter.
    static constexpr std::size_t kMessageWidth = 40;

    ConsoleEncoder(Buffer& out, Buffer& scratch, const EncoderOptions& options) noexcept
        : KeyValueEncoder(out, scratch, options, true) {}

    /// Appends one whole record, ending in '\n', through an encoder of its own: the record
    /// path's one frame in the encoder (record() is inlined into it).
    static void write_record(Buffer& out, Buffer& scratch, const EncoderOptions& options, const Record& record,
                             const EncodedContexts& context);

private:
    /// write_record()'s body.
    void record(const Record& record, const EncodedContexts& context);
    /// The logger column: the name and ':' padded to options_.logger_width + 1, then a space.
    void write_logger(std::string_view name);
    /// The message's lines after the first, each on a line of its own after the indent.
    void write_further_lines(std::string_view rest);
};

/// Appends free text (message, logger name) for a terminal: quotes and backslashes as they are,
/// control characters escaped as in JSON (C1 too), invalid UTF-8 replaced by U+FFFD.
void append_console_text(Buffer& out, std::string_view text);

}  // namespace fieldlog::detail
