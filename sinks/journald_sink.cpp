// SPDX-License-Identifier: MIT
// The journald sink: each typed record is turned into a native-protocol entry in one buffer the
// sink owns (its values written as the JSON encoder writes them, strings as their bytes), then
// sent as one datagram, or, when too large for one, as a sealed memfd. The last step of the
// record path; its buffers are reused, so a record allocates only to grow them.
#include "fieldlog/sinks/journald_sink.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "base/buffer.hpp"
#include "base/thread_id.hpp"
#include "encode/json_encoder.hpp"
#include "encode/redact.hpp"
#include "encode/reserved_keys.hpp"
#include "encode/text.hpp"
#include "sink_io.hpp"

namespace fieldlog {
namespace {

using detail::append_utf8_repaired;
using detail::Buffer;
using detail::JsonEncoder;

// Larger entries go as a memfd: a datagram holds the sender's socket buffer until journald has
// read it, so a few large ones would fill it for everything behind them.
constexpr std::size_t kLargestDatagram = 64 * 1024;
constexpr std::size_t kFieldNameLimit = 64;      // journald ignores longer names
constexpr std::size_t kCrashFields = 16;  // more than the crash path's `fatal` record has
constexpr int kSendBuffer = 8 * 1024 * 1024;     // room for a burst while journald is busy
constexpr std::string_view kNamePrefix = "F_";

/// The syslog priority of a level, as journald's PRIORITY field writes it.
char priority(Level level) noexcept {
    switch (level) {
        case Level::trace:
        case Level::debug: return '7';
        case Level::info: return '6';
        case Level::warn: return '4';
        case Level::error: return '3';
        case Level::fatal:
        case Level::off: return '2';
    }
    return '6';
}

/// The value written since `start` (just after its `=`): kept as it is, or, when it holds a
/// newline, moved into the binary-safe form (`\n` in place of the `=`, then the 64-bit
/// little-endian length); then the closing `\n`.
void finish_value(Buffer& entry, std::size_t start) {
    const std::size_t size = entry.size() - start;
    if (size != 0 && std::memchr(entry.data() + start, '\n', size) != nullptr) {
        entry.resize(entry.size() + 8);
        char* const value = entry.data() + start;
        std::memmove(value + 8, value, size);
        value[-1] = '\n';
        std::uint64_t length = size;
        for (int i = 0; i < 8; ++i, length >>= 8) value[i] = static_cast<char>(length & 0xFF);
    }
    entry.push_back('\n');
}

/// One field of the native protocol: `name` (valid as it is) with the bytes `value`.
void append_field(Buffer& entry, std::string_view name, std::string_view value) {
    entry.append(name);
    entry.push_back('=');
    const std::size_t start = entry.size();
    entry.append(value);
    finish_value(entry, start);
}

/// The same with the text as JSON would carry it: invalid UTF-8 replaced.
void append_text_field(Buffer& entry, std::string_view name, std::string_view text) {
    entry.append(name);
    entry.push_back('=');
    const std::size_t start = entry.size();
    append_utf8_repaired(entry, text);
    finish_value(entry, start);
}

/// The field name of a record's key, from the key as the JSON line writes it (a reserved key
/// with its `fields.` prefix): see JournaldSink. `scratch` is where that key is assembled.
void append_field_name(Buffer& entry, Buffer& scratch, std::string_view key) {
    scratch.clear();
    if (detail::is_reserved_key(key)) scratch.append(detail::kReservedKeyPrefix);
    append_utf8_repaired(scratch, key);
    for (char& c : std::span<char>(scratch.data(), scratch.size())) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        } else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
            c = '_';
        }
    }
    const std::string_view name = scratch.view();
    std::size_t room = kFieldNameLimit;
    if (name.empty() || name[0] == '_' || (name[0] >= '0' && name[0] <= '9')) {
        entry.append(kNamePrefix);
        room -= kNamePrefix.size();
    }
    entry.append(name.substr(0, room));
}

bool is_ascii(std::string_view text) noexcept {
    return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

/// True when the JSON line writes keys `a` and `b` as one member name: a reserved key with the
/// `fields.` prefix (so `msg` and `fields.msg` meet there), invalid UTF-8 replaced (so two
/// keys of different invalid bytes may meet). `first` and `second` hold the repaired keys.
bool same_written_key(std::string_view a, std::string_view b, Buffer& first, Buffer& second) {
    if (a == b) return true;
    const bool a_ascii = is_ascii(a);
    if (a_ascii != is_ascii(b)) return false;  // a replacement is never ASCII
    if (!a_ascii) {
        first.clear();
        second.clear();
        append_utf8_repaired(first, a);
        append_utf8_repaired(second, b);
        return first.view() == second.view();
    }
    const bool a_reserved = detail::is_reserved_key(a);
    if (a_reserved == detail::is_reserved_key(b)) return false;
    const std::string_view reserved = a_reserved ? a : b;
    const std::string_view plain = a_reserved ? b : a;
    return plain.size() == detail::kReservedKeyPrefix.size() + reserved.size() &&
           plain.starts_with(detail::kReservedKeyPrefix) && plain.ends_with(reserved);
}

/// Writes field values as the journal gets them: a string as its bytes (invalid UTF-8 replaced,
/// as in the JSON line), any other scalar as the JSON encoder writes it without quotes, an
/// object or array as its compact JSON text. A user type goes through this encoder: the first
/// value it writes at the top is the field's, written by the same rule. Strings over
/// options.max_value_bytes are cut, at every depth, as every format cuts them.
class FieldValues final : public ValueEncoder {
public:
    /// `scratch` holds a message or error text on its way, `json_scratch` the JSON encoder's,
    /// `cut_scratch` a string being cut.
    FieldValues(Buffer& entry, Buffer& scratch, Buffer& json_scratch, Buffer& cut_scratch,
                const EncoderOptions& options) noexcept
        : entry_(entry), scratch_(scratch), json_(entry, json_scratch, options),
          cap_{.max_value_bytes = options.max_value_bytes, .scratch = &cut_scratch} {}

    /// `name=value\n` (or the binary-safe form) for a field's value.
    void field(const Value& v) {
        entry_.push_back('=');
        const std::size_t start = entry_.size();
        written_ = false;
        if (cap_.max_value_bytes != 0) {
            detail::RedactingEncoder capped(*this, cap_);
            capped.value(v);
        } else {
            top_value(v);
        }
        json_.close_all();  // what a user type left open
        if (!written_) entry_.append("null");  // a user type that wrote nothing, as in JSON
        finish_value(entry_, start);
    }

    void value(const Value& v) override {
        if (!json_.idle()) {
            json_.value(v);
        } else if (!written_) {
            top_value(v);
        }
    }
    void begin_array() override {
        open_at_top();
        json_.begin_array();
    }
    void begin_object() override {
        open_at_top();
        json_.begin_object();
    }
    void end_array() override { json_.end_array(); }
    void end_object() override { json_.end_object(); }
    void key(std::string_view k) override {
        if (!json_.idle()) json_.key(k);  // at the top a key has no object to go in
    }
    void formatted(fmt::string_view format, fmt::format_args args) override {
        if (!json_.idle()) {
            json_.formatted(format, args);
            return;
        }
        if (written_) return;
        written_ = true;
        scratch_.clear();
        fmt::vformat_to(std::back_inserter(scratch_), format, args);
        append_utf8_repaired(entry_, scratch_.view());
    }

private:
    void top_value(const Value& v) {
        switch (v.kind()) {
            case Value::Kind::custom: v.encode_custom_into(*this); return;
            case Value::Kind::string:
                written_ = true;
                append_utf8_repaired(entry_, v.as_string());
                return;
            case Value::Kind::error_code:
                written_ = true;
                scratch_.clear();
                detail::append_error_code(scratch_, v.as_error_code());
                append_utf8_repaired(entry_, scratch_.view());
                return;
            default: break;
        }
        written_ = true;
        const std::size_t start = entry_.size();
        json_.expect_value();
        json_.value(v);
        // A scalar the encoder quotes (a time, a duration, bytes, NaN) needs no escape inside.
        if (entry_.size() - start >= 2 && entry_[start] == '"') {
            entry_.erase(start, start + 1);
            entry_.truncate(entry_.size() - 1);
        }
    }
    /// A container opened at the top is the field's value, unless one was written already
    /// (then the encoder skips it, having no key for it).
    void open_at_top() {
        if (!json_.idle() || written_) return;
        written_ = true;
        json_.expect_value();
    }

    Buffer& entry_;
    Buffer& scratch_;
    JsonEncoder json_;
    detail::ValuePolicy cap_;
    bool written_ = false;
};

}  // namespace

struct JournaldSink::State {
    State(JournaldSink& sink, JournaldSinkOptions opts);
    ~State() {
        if (fd >= 0) ::close(fd);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    JournaldSink& owner;
    const JournaldSinkOptions options;
    std::string identifier;
    sockaddr_un address{};
    socklen_t address_length = 0;
    int fd = -1;

    // Reused by every record: they grow to the largest record so far, then stay.
    Buffer entry;
    Buffer scratch;
    Buffer json_scratch;
    Buffer cut_scratch;
    std::vector<const Field*> fields;

    std::atomic<std::uint64_t> memfd_entries{0};
    detail::ErrorReporter errors;

    /// Makes `entry` the journal entry of `record`: the one place a record is read.
    void build(const TypedRecordView& record);
    void send() noexcept;
    /// 0, or the errno of sending `size` bytes at `data` as one datagram.
    int send_datagram(const char* data, std::size_t size) const noexcept;
    void send_memfd(const char* data, std::size_t size) noexcept;
    void lost(std::string_view operation, int error) noexcept;
};

JournaldSink::State::State(JournaldSink& sink, JournaldSinkOptions opts) : owner(sink), options(std::move(opts)) {
    if (options.socket.empty()) throw std::invalid_argument("journald socket path is empty");
    if (options.socket.size() >= sizeof address.sun_path) {
        throw std::invalid_argument("journald socket path '" + options.socket + "' is longer than " +
                                    std::to_string(sizeof address.sun_path - 1) + " bytes");
    }
    identifier = options.identifier.empty() ? std::string(program_invocation_short_name) : options.identifier;
    fields.reserve(kCrashFields);  // the crash path's record never grows it
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, options.socket.data(), options.socket.size());
    address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + options.socket.size() + 1);

    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket for journald");
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer);  // best effort: wmem_max caps it
}

void JournaldSink::State::lost(std::string_view operation, int error) noexcept {
    owner.count_error();
    owner.count_dropped();
    errors.report("journald", options.socket, operation, error);
}

int JournaldSink::State::send_datagram(const char* data, std::size_t size) const noexcept {
    iovec part{const_cast<char*>(data), size};
    msghdr message{};
    message.msg_name = const_cast<sockaddr_un*>(&address);
    message.msg_namelen = address_length;
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    for (;;) {
        if (::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) return 0;
        if (errno != EINTR) return errno;
    }
}

void JournaldSink::State::send_memfd(const char* data, std::size_t size) noexcept {
    const int memfd = ::memfd_create("fieldlog-journal-entry", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd < 0) {
        lost("memfd_create", errno);
        return;
    }
    for (std::size_t written = 0; written < size;) {
        const ssize_t n = ::write(memfd, data + written, size - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            lost("write to memfd", n < 0 ? errno : EIO);
            ::close(memfd);
            return;
        }
        written += static_cast<std::size_t>(n);
    }
    // journald takes a memfd only once it can no longer change under it.
    if (::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        lost("seal memfd", errno);
        ::close(memfd);
        return;
    }
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_name = &address;
    message.msg_namelen = address_length;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* const rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &memfd, sizeof memfd);
    int error = 0;
    while (::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        if (errno != EINTR) {
            error = errno;
            break;
        }
    }
    ::close(memfd);
    if (error != 0) {
        lost("send memfd", error);
        return;
    }
    memfd_entries.fetch_add(1, std::memory_order_relaxed);
}

void JournaldSink::State::build(const TypedRecordView& record) {
    static const EncoderOptions defaults{};
    // How values are written: the time's and durations' forms, the call facts, the value cap.
    const EncoderOptions& encoding = record.options != nullptr ? *record.options : defaults;
    entry.clear();
    const char level_digit = priority(record.level);
    append_field(entry, "PRIORITY", {&level_digit, 1});
    append_field(entry, "SYSLOG_IDENTIFIER", identifier);
    char time[max_rfc3339_size];
    append_field(entry, "FIELDLOG_TS",
                 {time, static_cast<std::size_t>(append_rfc3339(time, record.time, encoding.timestamp) - time)});
    append_text_field(entry, "FIELDLOG_LOGGER", record.logger);
    const Message& message = record.message;
    if (message.formatted()) {
        scratch.clear();
        fmt::vformat_to(std::back_inserter(scratch), message.text(), message.args());
        append_text_field(entry, "MESSAGE", scratch.view());
    } else {
        append_text_field(entry, "MESSAGE", message.text());
    }
    if ((encoding.call_facts & caller_fact) != 0) {
        const SourceLocation where = message.where();
        append_text_field(entry, "CODE_FILE", detail::source_file_tail(where.file_name()));
        char line[24];
        const auto written = fmt::format_to_n(line, sizeof line, "{}", where.line());
        append_field(entry, "CODE_LINE", {line, written.size});
        if ((encoding.call_facts & function_fact) != 0) append_text_field(entry, "CODE_FUNC", where.function_name());
    }
    if ((encoding.call_facts & thread_id_fact) != 0) {
        char tid[16];
        const auto written = fmt::format_to_n(tid, sizeof tid, "{}", record.thread_id);
        append_field(entry, "TID", {tid, written.size});
    }
    // Bound, then scope, then the call's fields; of a key given again the last one counts,
    // where it stands (field.hpp's rule, as the JSON line has it).
    fields.clear();
    for (const std::span<const Field> part : {record.bound, record.scope, record.fields}) {
        for (const Field& f : part) fields.push_back(&f);
    }
    FieldValues values(entry, scratch, json_scratch, cut_scratch, encoding);
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string_view key = fields[i]->key;
        const bool replaced =
            std::any_of(fields.begin() + static_cast<std::ptrdiff_t>(i) + 1, fields.end(), [&](const Field* later) {
                return same_written_key(key, later->key, scratch, cut_scratch);  // both free between values
            });
        if (replaced) continue;
        append_field_name(entry, scratch, key);
        values.field(fields[i]->value);
    }
}

void JournaldSink::State::send() noexcept {
    const std::size_t size = entry.size();
    if (size <= kLargestDatagram) {
        const int error = send_datagram(entry.data(), size);
        if (error == 0) return;
        if (error != EMSGSIZE) {
            lost("send", error);
            return;
        }
    }
    send_memfd(entry.data(), size);
}

JournaldSink::JournaldSink(JournaldSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {}

JournaldSink::~JournaldSink() = default;

void JournaldSink::write(const RecordView& record) { static_cast<void>(record); }

void JournaldSink::write_typed(const TypedRecordView& record) {
    state_->build(record);
    state_->send();
}

void JournaldSink::write_typed_on_crash(const TypedRecordView& record) noexcept {
    // A record this small is built within the buffers' inline room and the reserved field list:
    // no heap. One datagram, no report: the process is ending.
    try {
        state_->build(record);
    } catch (...) {
        return;
    }
    if (state_->send_datagram(state_->entry.data(), state_->entry.size()) != 0) count_dropped();
}

SinkInfo JournaldSink::info() const {
    return {.kind = "journald", .target = state_->options.socket, .format = Format::json, .typed = true};
}

std::uint64_t JournaldSink::memfd_entries() const noexcept {
    return state_->memfd_entries.load(std::memory_order_relaxed);
}

const JournaldSinkOptions& JournaldSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog
