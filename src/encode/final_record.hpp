// The `fatal` record of a process that ends on a signal, encoded on the encode side: the crash
// path (src/control/signals.cpp) puts encode_final_record into the FinalNote it hands to the
// dispatcher (dispatch/final_flush.hpp), which calls it once per format without including any
// encoder. Async-signal-safe: no heap, no lock.
#pragma once

#include "base/buffer.hpp"
#include "dispatch/final_flush.hpp"
#include "fieldlog/encoder.hpp"
#include "fieldlog/logger.hpp"

namespace fieldlog::detail {

/// The final record's logger name. Made on the first call, which install_signal_handlers()
/// makes before any handler can run (a handler may not allocate); never destroyed (a signal may
/// arrive during static destruction).
const LoggerName& final_record_logger();

/// Encodes the one `fatal` record naming the signal (logger "fieldlog") in `options`' format.
/// Uses no heap for it (the record is far below the buffer's inline size). A FinalEncoder.
void encode_final_record(const EncoderOptions& options, Buffer& out, Buffer& scratch,
                         const FinalNote& note) noexcept;

}  // namespace fieldlog::detail
