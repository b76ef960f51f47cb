// SPDX-License-Identifier: MIT
// libFuzzer target for the journald sink's entries (sinks/journald/): the input gives a
// message and fields (strings of any bytes, numbers, booleans, null, nested objects and arrays)
// logged through fieldlog to a MemorySink and the journald sink at once. The JSON line, read by
// the strict parser of fuzz_support.hpp, predicts the entry exactly (PRIORITY, SYSLOG_IDENTIFIER,
// then each member by the header's naming rule, strings decoded, other values as their JSON
// text): the sink, which builds it from the typed record, must send that, well-formed native
// protocol: fields `NAME=value\n` or `NAME\n` + 64-bit length + bytes + `\n`, every NAME of A-Z,
// 0-9 and _ not starting with _ or a digit, at most 64 long, PRIORITY first.
// The entries are read from a datagram socket of the target's own. Seeds: corpus/journald/.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fieldlog/fieldlog.hpp"
#include "fuzz_support.hpp"

namespace {

using Entry = std::vector<std::pair<std::string, std::string>>;

/// The socket the sink sends to, bound once for the whole run.
struct Receiver {
    int fd = -1;
    std::string path;
    Receiver() {
        char dir[] = "/tmp/journald_fuzz.XXXXXX";
        if (::mkdtemp(dir) == nullptr) fuzz::fail("mkdtemp", "");
        path = std::string(dir) + "/socket";
        fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) fuzz::fail("bind", path);
        const int big = 4 * 1024 * 1024;
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    }
    /// The one datagram the last write sent (the inputs stay far below the memfd size).
    std::string take() const {
        std::string datagram(256 * 1024, '\0');
        const ssize_t n = ::recv(fd, datagram.data(), datagram.size(), MSG_DONTWAIT);
        if (n < 0) fuzz::fail("no datagram for a record", "");
        datagram.resize(static_cast<std::size_t>(n));
        return datagram;
    }
};

Receiver& receiver() {
    static Receiver* const instance = new Receiver;
    return *instance;
}

bool name_byte(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/// Reads a native-protocol entry, checking its form.
Entry parse_entry(std::string_view d) {
    Entry entry;
    std::size_t i = 0;
    while (i < d.size()) {
        const std::size_t name_end = d.find_first_of("=\n", i);
        if (name_end == std::string_view::npos) fuzz::fail("a field without = or newline", d);
        const std::string name(d.substr(i, name_end - i));
        if (name.empty() || name.size() > 64 || name[0] == '_' || (name[0] >= '0' && name[0] <= '9')) {
            fuzz::fail("a field name journald refuses", name);
        }
        for (const char c : name) {
            if (!name_byte(c)) fuzz::fail("a byte outside A-Z0-9_ in a field name", name);
        }
        if (d[name_end] == '=') {
            const std::size_t end = d.find('\n', name_end + 1);
            if (end == std::string_view::npos) fuzz::fail("a value without its newline", d);
            entry.emplace_back(name, std::string(d.substr(name_end + 1, end - name_end - 1)));
            i = end + 1;
            continue;
        }
        if (name_end + 9 > d.size()) fuzz::fail("a binary-safe field without its length", d);
        std::uint64_t length = 0;
        for (int b = 7; b >= 0; --b) length = (length << 8) | static_cast<unsigned char>(d[name_end + 1 + static_cast<std::size_t>(b)]);
        const std::size_t start = name_end + 9;
        if (length > d.size() - start || start + length >= d.size() || d[start + length] != '\n') {
            fuzz::fail("a binary-safe field whose length does not end at a newline", d);
        }
        entry.emplace_back(name, std::string(d.substr(start, length)));
        i = start + length + 1;
    }
    if (entry.empty() || entry[0].first != "PRIORITY") fuzz::fail("an entry that does not start with PRIORITY", d);
    return entry;
}

/// The field name a member's key becomes (the header's rule, written again here).
std::string field_name(const std::string& key) {
    if (key == "msg") return "MESSAGE";
    if (key == "logger") return "FIELDLOG_LOGGER";
    if (key == "ts") return "FIELDLOG_TS";
    std::string name;
    for (const char c : key) {
        name += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : name_byte(c) ? c : '_';
    }
    if (name.empty() || name[0] == '_' || (name[0] >= '0' && name[0] <= '9')) name = "F_" + name;
    return name.substr(0, 64);
}

using fuzz::Reader;

/// Fields from the input; owns what they refer to.
class Builder {
public:
    explicit Builder(Reader& in) : in_(in) {}
    std::vector<fieldlog::Field> fields(int max, int depth) {
        std::vector<fieldlog::Field> out;
        const int n = in_.byte() % (max + 1);
        for (int i = 0; i < n; ++i) {
            static constexpr std::string_view dictionary[] = {"a", "user-id", "2fa", "_x", "msg", "ts", "", "Mixed.Case"};
            const std::uint8_t pick = in_.byte();
            const std::string_view key = pick < 128 ? dictionary[pick % std::size(dictionary)] : keep(in_.bytes(70));
            out.push_back({key, value(depth)});
        }
        return out;
    }

private:
    std::string_view keep(std::string_view s) { return *strings_.emplace_back(std::make_unique<std::string>(s)); }
    fieldlog::Value value(int depth) {
        switch (in_.byte() % 8) {
            case 0: return nullptr;
            case 1: return (in_.byte() & 1) != 0;
            case 2: return static_cast<std::int64_t>(static_cast<std::int8_t>(in_.byte())) * 1'000'003;
            case 3: return static_cast<double>(in_.byte()) / 8.0;
            case 6:
                if (depth > 0) {
                    auto& members = *objects_.emplace_back(std::make_unique<std::vector<fieldlog::Field>>(fields(3, depth - 1)));
                    return fieldlog::Object(std::span<const fieldlog::Field>(members));
                }
                [[fallthrough]];
            default: return keep(in_.bytes(40));  // any bytes: newlines, controls, invalid UTF-8
        }
    }

    Reader& in_;
    std::vector<std::unique_ptr<std::string>> strings_;
    std::vector<std::unique_ptr<std::vector<fieldlog::Field>>> objects_;
};

struct Sinks {
    std::shared_ptr<fieldlog::JournaldSink> journald;
    std::shared_ptr<fieldlog::MemorySink> memory;
};

Sinks& sinks() {
    static Sinks* const instance = [] {
        auto* s = new Sinks{std::make_shared<fieldlog::JournaldSink>(
                                fieldlog::JournaldSinkOptions{.socket = receiver().path, .identifier = "fuzz"}),
                            std::make_shared<fieldlog::MemorySink>()};
        fieldlog::configure({.level = fieldlog::Level::trace,
                             .sinks = {{.target = s->journald}, {.target = s->memory}},
                             .clock = []() noexcept { return fieldlog::Timestamp(1796027891, 123456789); }});
        return s;
    }();
    return *instance;
}

void check_record(Reader& in) {
    Sinks& s = sinks();
    Builder builder(in);
    const std::string message(in.bytes(60));
    const std::vector<fieldlog::Field> fields = builder.fields(6, 2);
    s.memory->clear();
    fieldlog::get("fuzz").log(fieldlog::Level::warn, message, std::span<const fieldlog::Field>(fields));
    const std::vector<std::string> lines = s.memory->lines();
    if (lines.size() != 1) fuzz::fail("not one JSON line", "");
    fuzz::JsonParser parser(lines[0]);
    Entry expected{{"PRIORITY", "4"}, {"SYSLOG_IDENTIFIER", "fuzz"}};
    for (const fuzz::JsonParser::Member& m : parser.top_object()) {
        if (m.key == "level") continue;  // it is PRIORITY
        expected.emplace_back(field_name(m.key), m.is_string ? m.string_value : m.raw_value);
    }
    if (parse_entry(receiver().take()) != expected) fuzz::fail("the entry is not what the JSON line says", lines[0]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Reader in(data, size);
    check_record(in);
    return 0;
}
