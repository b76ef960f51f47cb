// SPDX-License-Identifier: MIT
// Oracles shared by the encoder fuzz targets, written independently of the library: the
// U+FFFD substitution of invalid UTF-8 by maximal subpart (Unicode §3.9, Table 3-7), a strict
// RFC 8259 JSON-line parser that rejects duplicate member names at any depth and decodes
// strings, and a logfmt line tokenizer; and a reader that turns the input into choices. Each
// failure aborts with a message (a fuzz finding).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fuzz {

[[noreturn]] inline void fail(const char* what, std::string_view context) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n  in: %.*s\n", what, static_cast<int>(context.size()), context.data());
    std::abort();
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

/// Decodes `s` into code points, each ill-formed maximal subpart becoming U+FFFD.
inline std::vector<std::uint32_t> code_points(std::string_view s) {
    // Table 3-7: for each lead byte, the sequence length and the range of the second byte.
    struct Lead {
        int length;
        unsigned char low;
        unsigned char high;
    };
    auto lead_of = [](unsigned char b) -> Lead {
        if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
        if (b == 0xE0) return {3, 0xA0, 0xBF};
        if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {3, 0x80, 0xBF};
        if (b == 0xED) return {3, 0x80, 0x9F};
        if (b == 0xF0) return {4, 0x90, 0xBF};
        if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
        if (b == 0xF4) return {4, 0x80, 0x8F};
        return {0, 0, 0};
    };
    std::vector<std::uint32_t> out;
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            out.push_back(b);
            ++i;
            continue;
        }
        const Lead lead = lead_of(b);
        if (lead.length == 0) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        std::uint32_t cp = b & (0xFF >> (lead.length + 1));
        int taken = 1;
        while (taken < lead.length && i + static_cast<std::size_t>(taken) < s.size()) {
            const auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(taken)]);
            const unsigned char low = taken == 1 ? lead.low : 0x80;
            const unsigned char high = taken == 1 ? lead.high : 0xBF;
            if (c < low || c > high) break;
            cp = (cp << 6) | (c & 0x3F);
            ++taken;
        }
        out.push_back(taken == lead.length ? cp : 0xFFFD);
        i += static_cast<std::size_t>(taken);
    }
    return out;
}

/// `s` with every ill-formed maximal subpart replaced by U+FFFD.
inline std::string replaced(std::string_view s) {
    std::string out;
    for (const std::uint32_t cp : code_points(s)) append_utf8(out, cp);
    return out;
}

inline bool valid_utf8(std::string_view s) { return replaced(s) == s; }

/// A strict parser for one JSON text (RFC 8259) holding objects whose member names must be
/// unique; strings are decoded to UTF-8.
class JsonParser {
public:
    /// Keeps its own copy: callers pass temporaries such as "{\"v\":" + quoted + "}".
    explicit JsonParser(std::string_view text) : text_(text) {}

    struct Member {
        std::string key;
        std::string raw_value;      ///< the value's text as written
        std::string string_value;   ///< decoded, when the value is a string
        bool is_string = false;
    };

    /// Parses a whole object and returns its members in order.
    std::vector<Member> top_object() {
        if (!valid_utf8(text_)) fail("JSON line is not valid UTF-8", text_);
        std::vector<Member> members;
        skip_ws();
        expect('{');
        skip_ws();
        std::set<std::string> keys;
        if (peek() != '}') {
            for (;;) {
                Member m;
                skip_ws();
                m.key = string();
                if (!keys.insert(m.key).second) fail("duplicate member name at the top level", text_);
                skip_ws();
                expect(':');
                skip_ws();
                const std::size_t start = pos_;
                if (peek() == '"') {
                    m.string_value = string();
                    m.is_string = true;
                } else {
                    value(1);
                }
                m.raw_value = std::string(text_.substr(start, pos_ - start));
                members.push_back(std::move(m));
                skip_ws();
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                break;
            }
        }
        expect('}');
        skip_ws();
        if (pos_ != text_.size()) fail("bytes after the JSON object", text_);
        return members;
    }

private:
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    void expect(char c) {
        if (peek() != c) fail("unexpected character in JSON", text_.substr(pos_ < 40 ? 0 : pos_ - 40, 80));
        ++pos_;
    }
    void skip_ws() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
    }
    unsigned hex4() {
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            ++pos_;
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else fail("bad \\u escape", text_);
        }
        return v;
    }
    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (pos_ >= text_.size()) fail("unterminated string", text_);
            const auto c = static_cast<unsigned char>(text_[pos_++]);
            if (c == '"') return out;
            if (c < 0x20) fail("raw control character in a string", text_);
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            const char e = peek();
            ++pos_;
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    std::uint32_t cp = hex4();
                    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate", text_);
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (peek() != '\\') fail("lone high surrogate", text_);
                        ++pos_;
                        expect('u');
                        const std::uint32_t low = hex4();
                        if (low < 0xDC00 || low > 0xDFFF) fail("bad surrogate pair", text_);
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: fail("bad escape", text_);
            }
        }
    }
    void number() {
        const std::size_t start = pos_;
        if (peek() == '-') ++pos_;
        if (peek() == '0') {
            ++pos_;
        } else if (peek() >= '1' && peek() <= '9') {
            while (peek() >= '0' && peek() <= '9') ++pos_;
        } else {
            fail("bad number", text_);
        }
        if (peek() == '.') {
            ++pos_;
            if (!(peek() >= '0' && peek() <= '9')) fail("bad fraction", text_);
            while (peek() >= '0' && peek() <= '9') ++pos_;
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            if (!(peek() >= '0' && peek() <= '9')) fail("bad exponent", text_);
            while (peek() >= '0' && peek() <= '9') ++pos_;
        }
        const std::string digits(text_.substr(start, pos_ - start));
        if (!std::isfinite(std::strtod(digits.c_str(), nullptr))) fail("number overflows a double", text_);
    }
    void literal(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) fail("bad literal", text_);
        pos_ += word.size();
    }
    void value(int depth) {
        if (depth > 200) fail("nesting too deep", text_);
        skip_ws();
        const char c = peek();
        if (c == '{') {
            ++pos_;
            skip_ws();
            std::set<std::string> keys;
            if (peek() == '}') {
                ++pos_;
                return;
            }
            for (;;) {
                skip_ws();
                if (!keys.insert(string()).second) fail("duplicate member name in a nested object", text_);
                skip_ws();
                expect(':');
                value(depth + 1);
                skip_ws();
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                expect('}');
                return;
            }
        }
        if (c == '[') {
            ++pos_;
            skip_ws();
            if (peek() == ']') {
                ++pos_;
                return;
            }
            for (;;) {
                value(depth + 1);
                skip_ws();
                if (peek() == ',') {
                    ++pos_;
                    continue;
                }
                expect(']');
                return;
            }
        }
        if (c == '"') {
            string();
        } else if (c == 't') {
            literal("true");
        } else if (c == 'f') {
            literal("false");
        } else if (c == 'n') {
            literal("null");
        } else {
            number();
        }
    }

    std::string text_;
    std::size_t pos_ = 0;
};

/// Splits a logfmt line into (key, value) pairs: bare keys, bare or quoted (JSON-escaped)
/// values, one space between pairs. Fails on anything else and on a repeated key.
inline std::vector<std::pair<std::string, std::string>> logfmt_pairs(std::string_view line) {
    std::vector<std::pair<std::string, std::string>> pairs;
    std::set<std::string> keys;
    std::size_t i = 0;
    while (i < line.size()) {
        const std::size_t key_start = i;
        while (i < line.size() && line[i] != '=') {
            const auto c = static_cast<unsigned char>(line[i]);
            if (c <= 0x20 || c == '"' || c == 0x7F) fail("bad byte in a logfmt key", line);
            ++i;
        }
        if (i == key_start || i == line.size()) fail("logfmt key without =", line);
        std::string key(line.substr(key_start, i - key_start));
        ++i;  // '='
        std::string value;
        if (i < line.size() && line[i] == '"') {
            std::size_t end = i + 1;
            while (end < line.size() && line[end] != '"') end += line[end] == '\\' ? 2 : 1;
            if (end >= line.size()) fail("unterminated logfmt value", line);
            const std::string quoted(line.substr(i, end + 1 - i));
            JsonParser parser("{\"v\":" + quoted + "}");
            value = parser.top_object().at(0).string_value;
            i = end + 1;
        } else {
            const std::size_t value_start = i;
            while (i < line.size() && line[i] != ' ') {
                const auto c = static_cast<unsigned char>(line[i]);
                if (c < 0x20 || c == '"' || c == '=' || c == 0x7F) fail("bad byte in a bare logfmt value", line);
                ++i;
            }
            if (i == value_start) fail("empty bare logfmt value", line);
            value = std::string(line.substr(value_start, i - value_start));
        }
        if (!keys.insert(key).second) fail("duplicate logfmt key", line);
        pairs.emplace_back(std::move(key), std::move(value));
        if (i < line.size()) {
            if (line[i] != ' ') fail("logfmt pairs not separated by one space", line);
            ++i;
            if (i == line.size()) fail("trailing space in logfmt", line);
        }
    }
    return pairs;
}

/// Reads a fuzz input as a stream of choices; past its end every byte is 0.
class Reader {
public:
    Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    std::uint64_t u64() {
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
        return v;
    }
    std::string_view bytes(std::size_t max) {
        // The length byte before what is left after it: as two arguments of one call their order
        // is unspecified, and GCC's (what is left first) reads one byte past the input when the
        // length byte is its last.
        const std::size_t wanted = byte() % (max + 1);
        const std::size_t n = std::min(wanted, size_ - pos_);
        const std::string_view s(reinterpret_cast<const char*>(data_ + pos_), n);
        pos_ += n;
        return s;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

}  // namespace fuzz
