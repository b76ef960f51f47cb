// SPDX-License-Identifier: MIT
// The journald sink: each JSON line is turned into a native-protocol entry in one buffer the
// sink owns (its top-level members walked once, strings unescaped straight into place), then
// sent as one datagram, or, when too large for one, as a sealed memfd. The last step of the
// record path; nothing here allocates once the buffer is as large as the largest entry so far.
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
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "sink_io.hpp"

namespace fieldlog {
namespace {

constexpr std::size_t kInitialBuffer = 64 * 1024;
constexpr std::size_t kCrashBuffer = 16 * 1024;
// Larger entries go as a memfd: a datagram holds the sender's socket buffer until journald has
// read it, so a few large ones would fill it for everything behind them.
constexpr std::size_t kLargestDatagram = 64 * 1024;
constexpr std::size_t kFieldNameLimit = 64;      // journald ignores longer names
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

int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// The code unit of the `\uXXXX` escape at text[at] ('\\' at `at`), or -1.
long escaped_unit(std::string_view text, std::size_t at) noexcept {
    if (at + 6 > text.size() || text[at + 1] != 'u') return -1;
    long unit = 0;
    for (std::size_t i = at + 2; i < at + 6; ++i) {
        const int digit = hex_digit(text[i]);
        if (digit < 0) return -1;
        unit = unit * 16 + digit;
    }
    return unit;
}

char* put_utf8(char* out, unsigned long code) noexcept {
    if (code < 0x80) {
        *out++ = static_cast<char>(code);
    } else if (code < 0x800) {
        *out++ = static_cast<char>(0xC0 | (code >> 6));
        *out++ = static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        *out++ = static_cast<char>(0xE0 | (code >> 12));
        *out++ = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        *out++ = static_cast<char>(0x80 | (code & 0x3F));
    } else {
        *out++ = static_cast<char>(0xF0 | (code >> 18));
        *out++ = static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        *out++ = static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        *out++ = static_cast<char>(0x80 | (code & 0x3F));
    }
    return out;
}

/// Writes the bytes the JSON string body `text` (no quotes) stands for to `out`: at most
/// text.size() bytes. A lone surrogate becomes U+FFFD; a malformed escape is copied as it is.
char* unescape(std::string_view text, char* out) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
        const char* backslash = static_cast<const char*>(std::memchr(text.data() + i, '\\', text.size() - i));
        const std::size_t run = backslash == nullptr ? text.size() - i : static_cast<std::size_t>(backslash - text.data()) - i;
        if (run > 0) std::memcpy(out, text.data() + i, run);
        out += run;
        i += run;
        if (i + 1 >= text.size()) {
            if (i < text.size()) *out++ = text[i++];  // a trailing lone backslash: not ours
            break;
        }
        const char kind = text[i + 1];
        char simple = 0;
        switch (kind) {
            case '"': simple = '"'; break;
            case '\\': simple = '\\'; break;
            case '/': simple = '/'; break;
            case 'b': simple = '\b'; break;
            case 'f': simple = '\f'; break;
            case 'n': simple = '\n'; break;
            case 'r': simple = '\r'; break;
            case 't': simple = '\t'; break;
            default: break;
        }
        if (simple != 0) {
            *out++ = simple;
            i += 2;
            continue;
        }
        const long unit = escaped_unit(text, i);
        if (unit < 0) {
            *out++ = text[i++];
            continue;
        }
        i += 6;
        unsigned long code = static_cast<unsigned long>(unit);
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            const long low = i < text.size() && text[i] == '\\' ? escaped_unit(text, i) : -1;
            if (low >= 0xDC00 && low <= 0xDFFF) {
                code = 0x10000 + ((code - 0xD800) << 10) + static_cast<unsigned long>(low - 0xDC00);
                i += 6;
            } else {
                code = 0xFFFD;
            }
        } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
            code = 0xFFFD;
        }
        out = put_utf8(out, code);
    }
    return out;
}

/// Index just past the JSON string that starts with the quote at json[at]; npos if unterminated.
std::size_t string_end(std::string_view json, std::size_t at) noexcept {
    for (std::size_t i = at + 1; i < json.size(); ++i) {
        if (json[i] == '\\') {
            ++i;
        } else if (json[i] == '"') {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

/// Index just past the JSON value that starts at json[at] (a string, an object or array with
/// everything in it, or a scalar up to the next ',' or '}'); npos when it does not end.
std::size_t value_end(std::string_view json, std::size_t at) noexcept {
    if (at >= json.size()) return std::string_view::npos;
    if (json[at] == '"') return string_end(json, at);
    if (json[at] == '{' || json[at] == '[') {
        std::size_t depth = 0;
        for (std::size_t i = at; i < json.size(); ++i) {
            const char c = json[i];
            if (c == '"') {
                i = string_end(json, i);
                if (i == std::string_view::npos) return i;
                --i;
            } else if (c == '{' || c == '[') {
                ++depth;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                return i + 1;
            }
        }
        return std::string_view::npos;
    }
    std::size_t i = at;
    while (i < json.size() && json[i] != ',' && json[i] != '}') ++i;
    return i == at ? std::string_view::npos : i;
}

/// Calls on_member(key, value) for each top-level member of the JSON object `json`, as the
/// encoder writes one (no whitespace): the key still escaped and without its quotes, the value
/// as its JSON text. False when `json` is not such an object; on_member may have seen a part.
template <typename OnMember>
bool for_each_member(std::string_view json, OnMember&& on_member) {
    if (json.size() < 2 || json.front() != '{' || json.back() != '}') return false;
    if (json.size() == 2) return true;
    std::size_t i = 1;
    for (;;) {
        if (json[i] != '"') return false;
        const std::size_t key_end = string_end(json, i);
        if (key_end == std::string_view::npos || key_end >= json.size() || json[key_end] != ':') return false;
        const std::size_t end = value_end(json, key_end + 1);
        if (end == std::string_view::npos || end >= json.size()) return false;
        on_member(json.substr(i + 1, key_end - i - 2), json.substr(key_end + 1, end - key_end - 1));
        if (json[end] == '}') return end + 1 == json.size();
        if (json[end] != ',') return false;
        i = end + 1;
    }
}

/// Writes one entry of the native protocol into [begin, end). Every append checks the room
/// left: an entry that does not fit marks the writer failed (the caller grows the buffer and
/// starts again), so nothing is written past `end`. No allocation, async-signal-safe.
class EntryWriter {
public:
    EntryWriter(char* begin, char* end) noexcept : begin_(begin), at_(begin), end_(end) {}

    [[nodiscard]] bool fits() const noexcept { return at_ != nullptr; }
    [[nodiscard]] std::size_t size() const noexcept { return fits() ? static_cast<std::size_t>(at_ - begin_) : 0; }
    /// Drops everything after the first `size` bytes (and a failure to fit).
    void truncate(std::size_t size) noexcept { at_ = begin_ + size; }

    /// `name` with the raw bytes `value`.
    void field(std::string_view name, std::string_view value) noexcept {
        char* const out = room(name.size() + 1 + 8 + value.size() + 1);
        if (out == nullptr) return;
        std::memcpy(out, name.data(), name.size());
        char* const value_at = out + name.size() + 1;
        if (!value.empty()) std::memcpy(value_at, value.data(), value.size());
        finish_value(value_at, value.size());
    }

    /// One top-level member: `key` as in the JSON text (escaped, no quotes), `value` its JSON text.
    void member(std::string_view key, std::string_view value) noexcept {
        if (!name(key)) return;
        const bool is_string = value.front() == '"';
        const std::string_view text = is_string ? value.substr(1, value.size() - 2) : value;
        char* const out = room(1 + 8 + text.size() + 1);
        if (out == nullptr) return;
        char* const value_at = out + 1;
        std::size_t size = text.size();
        if (is_string) {
            size = static_cast<std::size_t>(unescape(text, value_at) - value_at);
        } else {
            std::memcpy(value_at, text.data(), size);
        }
        finish_value(value_at, size);
    }

private:
    /// Room for `n` more bytes (the cursor stays); nullptr, and failed, when there is none.
    char* room(std::size_t n) noexcept {
        if (at_ == nullptr || static_cast<std::size_t>(end_ - at_) < n) {
            at_ = nullptr;
            return nullptr;
        }
        return at_;
    }

    /// Writes the field name of `key` (see JournaldSink) and moves past it.
    bool name(std::string_view key) noexcept {
        std::string_view fixed;
        if (key == "msg") fixed = "MESSAGE";
        if (key == "logger") fixed = "FIELDLOG_LOGGER";
        if (key == "ts") fixed = "FIELDLOG_TS";
        if (key == "function") fixed = "CODE_FUNC";  // the caller option's function, journald's name for it
        if (!fixed.empty()) {
            char* const out = room(fixed.size());
            if (out == nullptr) return false;
            std::memcpy(out, fixed.data(), fixed.size());
            at_ = out + fixed.size();
            return true;
        }
        char* const out = room(kNamePrefix.size() + key.size());
        if (out == nullptr) return false;
        char* const name_at = out + kNamePrefix.size();
        const std::size_t size = static_cast<std::size_t>(unescape(key, name_at) - name_at);
        for (std::size_t i = 0; i < size; ++i) {
            const char c = name_at[i];
            if (c >= 'a' && c <= 'z') {
                name_at[i] = static_cast<char>(c - 'a' + 'A');
            } else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
                name_at[i] = '_';
            }
        }
        const bool prefixed = size == 0 || name_at[0] == '_' || (name_at[0] >= '0' && name_at[0] <= '9');
        std::size_t length = size;
        if (prefixed) {
            std::memcpy(out, kNamePrefix.data(), kNamePrefix.size());
            length += kNamePrefix.size();
        } else {
            std::memmove(out, name_at, size);
        }
        at_ = out + std::min(length, kFieldNameLimit);
        return true;
    }

    /// The value is at value_at (one byte after the cursor's name, with 8 more bytes of room
    /// behind it): writes `=` before it, or, when it holds a newline, the binary-safe form
    /// `\n` + 64-bit little-endian length, then the closing `\n`.
    void finish_value(char* value_at, std::size_t size) noexcept {
        char* const separator = value_at - 1;
        if (size == 0 || std::memchr(value_at, '\n', size) == nullptr) {
            *separator = '=';
        } else {
            std::memmove(value_at + 8, value_at, size);
            *separator = '\n';
            std::uint64_t length = size;
            for (int i = 0; i < 8; ++i, length >>= 8) value_at[i] = static_cast<char>(length & 0xFF);
            value_at += 8;
        }
        value_at[size] = '\n';
        at_ = value_at + size + 1;
    }

    char* begin_;
    char* at_;
    char* end_;
};

/// The caller member ("file:line", the record's caller option) as journald's CODE_FILE and
/// CODE_LINE; false (the member is written as it is) when it has escapes or no line.
bool write_code_location(EntryWriter& entry, std::string_view value) noexcept {
    if (value.size() < 2 || value.front() != '"' || value.find('\\') != std::string_view::npos) return false;
    const std::string_view text = value.substr(1, value.size() - 2);
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == text.size()) return false;
    entry.field("CODE_FILE", text.substr(0, colon));
    entry.field("CODE_LINE", text.substr(colon + 1));
    return true;
}

/// The entry for `line` (without its '\n') in [out, out + capacity); its size, or 0 when it
/// does not fit there. No allocation, async-signal-safe.
std::size_t build_entry(std::string_view line, Level level, std::string_view identifier, char* out,
                        std::size_t capacity) noexcept {
    EntryWriter entry(out, out + capacity);
    const char level_digit = priority(level);
    entry.field("PRIORITY", {&level_digit, 1});
    entry.field("SYSLOG_IDENTIFIER", identifier);
    if (!entry.fits()) return 0;
    const std::size_t header = entry.size();
    const bool ours = for_each_member(line, [&](std::string_view key, std::string_view value) {
        if (key == "level" || !entry.fits()) return;  // PRIORITY says the level
        if (key == "caller" && write_code_location(entry, value)) return;
        entry.member(key, value);
    });
    if (!ours) {
        entry.truncate(header);
        entry.field("MESSAGE", line);
    }
    return entry.fits() ? entry.size() : 0;
}

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

    std::unique_ptr<char[]> buffer;
    std::size_t capacity = 0;
    std::unique_ptr<char[]> crash_buffer;  ///< the crash path's own: `buffer` may be mid-write

    std::atomic<std::uint64_t> memfd_entries{0};
    detail::ErrorReporter errors;

    void send(const RecordView& record);
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
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, options.socket.data(), options.socket.size());
    address_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + options.socket.size() + 1);

    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket for journald");
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSendBuffer, sizeof kSendBuffer);  // best effort: wmem_max caps it

    buffer = std::make_unique<char[]>(kInitialBuffer);
    capacity = kInitialBuffer;
    crash_buffer = std::make_unique<char[]>(kCrashBuffer);
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

void JournaldSink::State::send(const RecordView& record) {
    std::string_view line(record.bytes.data(), record.bytes.size());
    if (line.ends_with('\n')) line.remove_suffix(1);
    std::size_t size = 0;
    while ((size = build_entry(line, record.level, identifier, buffer.get(), capacity)) == 0) {
        // Larger than any entry before: grow once for it and for every later one as large.
        capacity = std::max(2 * capacity, 2 * line.size());
        buffer = std::make_unique_for_overwrite<char[]>(capacity);
    }
    if (size <= kLargestDatagram) {
        const int error = send_datagram(buffer.get(), size);
        if (error == 0) return;
        if (error != EMSGSIZE) {
            lost("send", error);
            return;
        }
    }
    send_memfd(buffer.get(), size);
}

JournaldSink::JournaldSink(JournaldSinkOptions options) : state_(std::make_unique<State>(*this, std::move(options))) {}

JournaldSink::~JournaldSink() = default;

void JournaldSink::write(const RecordView& record) { state_->send(record); }

void JournaldSink::write_on_crash(std::span<const RecordView> records) noexcept {
    State& s = *state_;
    for (const RecordView& record : records) {
        std::string_view line(record.bytes.data(), record.bytes.size());
        if (line.ends_with('\n')) line.remove_suffix(1);
        const std::size_t size = build_entry(line, record.level, s.identifier, s.crash_buffer.get(), kCrashBuffer);
        if (size > 0) static_cast<void>(s.send_datagram(s.crash_buffer.get(), size));
    }
}

SinkInfo JournaldSink::info() const {
    return {.kind = "journald", .target = state_->options.socket, .format = Format::json};
}

std::uint64_t JournaldSink::memfd_entries() const noexcept {
    return state_->memfd_entries.load(std::memory_order_relaxed);
}

const JournaldSinkOptions& JournaldSink::options() const noexcept { return state_->options; }

}  // namespace fieldlog
