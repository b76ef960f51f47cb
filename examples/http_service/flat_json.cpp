// SPDX-License-Identifier: MIT
// parse_flat_object: a single-pass recursive-descent reader limited to one level. Strings are
// returned as views into the input when they hold no escape (the common case), so reading a
// request body copies nothing.
#include "flat_json.hpp"

#include <charconv>
#include <cstring>
#include <system_error>

namespace http_service {

std::size_t utf8_sequence(std::string_view text) noexcept {
    const auto at = [text](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
    const unsigned lead = at(0);
    if (!text.empty() && lead < 0x80) return 1;
    std::size_t length = 0;
    unsigned low = 0x80;
    unsigned high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0;  // no overlong forms
        if (lead == 0xED) high = 0x9F;  // no UTF-16 surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90;
        if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
    } else {
        return 0;
    }
    if (at(1) < low || at(1) > high) return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if (at(i) < 0x80 || at(i) > 0xBF) return 0;
    }
    return length;
}

namespace {

class Reader {
public:
    Reader(std::string_view text, std::span<char> scratch) noexcept : text_(text), scratch_(scratch) {}

    FlatObject object(std::span<JsonMember> members) noexcept {
        FlatObject result;
        skip_space();
        if (!take('{')) return fail("expected a JSON object");
        skip_space();
        if (!take('}')) {
            for (;;) {
                if (result.size == members.size()) return fail("too many members");
                JsonMember& m = members[result.size];
                skip_space();
                if (!string(m.key)) return fail(error_);
                skip_space();
                if (!take(':')) return fail("expected ':' after a key");
                skip_space();
                if (!value(m)) return fail(error_);
                ++result.size;
                skip_space();
                if (take('}')) break;
                if (!take(',')) return fail("expected ',' or '}'");
            }
        }
        skip_space();
        if (pos_ != text_.size()) return fail("unexpected text after the object");
        return result;
    }

private:
    static FlatObject fail(std::string_view error) noexcept { return FlatObject{0, error}; }

    bool error(std::string_view message) noexcept {
        error_ = message;
        return false;
    }

    [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
    [[nodiscard]] unsigned char peek() const noexcept { return static_cast<unsigned char>(text_[pos_]); }

    bool take(char c) noexcept {
        if (at_end() || text_[pos_] != c) return false;
        ++pos_;
        return true;
    }

    void skip_space() noexcept {
        while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
    }

    bool value(JsonMember& m) noexcept {
        if (at_end()) return error("expected a value");
        const char c = text_[pos_];
        if (c == '"') {
            m.type = JsonType::string;
            return string(m.text);
        }
        if (c == '{' || c == '[') return error("nested objects and arrays are not accepted");
        if (literal("true") || literal("false")) {
            m.type = JsonType::boolean;
            m.text = c == 't' ? std::string_view("true") : std::string_view("false");
            return true;
        }
        if (literal("null")) {
            m.type = JsonType::null;
            m.text = "null";
            return true;
        }
        m.type = JsonType::number;
        return number(m);
    }

    bool literal(std::string_view word) noexcept {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    static bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

    bool digits() noexcept {
        const std::size_t start = pos_;
        while (!at_end() && digit(text_[pos_])) ++pos_;
        return pos_ > start;
    }

    /// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, then its value.
    bool number(JsonMember& m) noexcept {
        const std::size_t start = pos_;
        take('-');
        if (take('0')) {
            if (!at_end() && digit(text_[pos_])) return error("a number may not start with 0");
        } else if (!digits()) {
            return error("expected a value");
        }
        if (take('.') && !digits()) return error("expected digits after '.'");
        if (take('e') || take('E')) {
            if (!take('+')) take('-');
            if (!digits()) return error("expected digits in the exponent");
        }
        m.text = text_.substr(start, pos_ - start);
        const auto [end, ec] = std::from_chars(m.text.data(), m.text.data() + m.text.size(), m.number);
        if (ec != std::errc{} || end != m.text.data() + m.text.size()) return error("number out of range");
        return true;
    }

    int hex4() noexcept {
        if (text_.size() - pos_ < 4) return -1;
        int value = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = text_[pos_++];
            value <<= 4;
            if (c >= '0' && c <= '9') {
                value |= c - '0';
            } else if (c >= 'a' && c <= 'f') {
                value |= c - 'a' + 10;
            } else if (c >= 'A' && c <= 'F') {
                value |= c - 'A' + 10;
            } else {
                return -1;
            }
        }
        return value;
    }

    bool put(const char* bytes, std::size_t n) noexcept {
        if (scratch_.size() - used_ < n) return error("string too long");
        std::memcpy(scratch_.data() + used_, bytes, n);
        used_ += n;
        return true;
    }

    bool put_code_point(unsigned cp) noexcept {
        char out[4];
        std::size_t n = 0;
        if (cp < 0x80) {
            out[n++] = static_cast<char>(cp);
        } else if (cp < 0x800) {
            out[n++] = static_cast<char>(0xC0 | (cp >> 6));
            out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out[n++] = static_cast<char>(0xE0 | (cp >> 12));
            out[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out[n++] = static_cast<char>(0xF0 | (cp >> 18));
            out[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
        }
        return put(out, n);
    }

    bool escape() noexcept {
        if (at_end()) return error("unterminated string");
        const char c = text_[pos_++];
        char decoded = 0;
        switch (c) {
            case '"': decoded = '"'; break;
            case '\\': decoded = '\\'; break;
            case '/': decoded = '/'; break;
            case 'b': decoded = '\b'; break;
            case 'f': decoded = '\f'; break;
            case 'n': decoded = '\n'; break;
            case 'r': decoded = '\r'; break;
            case 't': decoded = '\t'; break;
            case 'u': {
                const int unit = hex4();
                if (unit < 0) return error("bad \\u escape");
                if (unit >= 0xDC00 && unit <= 0xDFFF) return error("unpaired surrogate");
                if (unit < 0xD800 || unit > 0xDBFF) return put_code_point(static_cast<unsigned>(unit));
                if (!take('\\') || !take('u')) return error("unpaired surrogate");
                const int low = hex4();
                if (low < 0xDC00 || low > 0xDFFF) return error("unpaired surrogate");
                return put_code_point(0x10000u + ((static_cast<unsigned>(unit) - 0xD800u) << 10) +
                                      (static_cast<unsigned>(low) - 0xDC00u));
            }
            default: return error("bad escape");
        }
        return put(&decoded, 1);
    }

    bool string(std::string_view& out) noexcept {
        if (!take('"')) return error("expected a string");
        const std::size_t start = pos_;
        bool decoding = false;  // an escape was seen: the string is being built in scratch_
        std::size_t scratch_start = 0;
        for (;;) {
            if (at_end()) return error("unterminated string");
            const unsigned char c = peek();
            if (c == '"') {
                out = decoding ? std::string_view(scratch_.data() + scratch_start, used_ - scratch_start)
                               : text_.substr(start, pos_ - start);
                ++pos_;
                return true;
            }
            if (c < 0x20) return error("control character in a string");
            if (c == '\\') {
                if (!decoding) {
                    decoding = true;
                    scratch_start = used_;
                    if (!put(text_.data() + start, pos_ - start)) return false;
                }
                ++pos_;
                if (!escape()) return false;
                continue;
            }
            std::size_t length = 1;
            if (c >= 0x80) {
                length = utf8_sequence(text_.substr(pos_));
                if (length == 0) return error("invalid UTF-8");
            }
            if (decoding && !put(text_.data() + pos_, length)) return false;
            pos_ += length;
        }
    }

    std::string_view text_;
    std::span<char> scratch_;
    std::size_t pos_ = 0;
    std::size_t used_ = 0;
    std::string_view error_;
};

}  // namespace

FlatObject parse_flat_object(std::string_view text, std::span<JsonMember> members, std::span<char> scratch) noexcept {
    return Reader(text, scratch).object(members);
}

const JsonMember* find_member(std::span<const JsonMember> members, std::string_view key) noexcept {
    for (const JsonMember& m : members) {
        if (m.key == key) return &m;
    }
    return nullptr;
}

}  // namespace http_service
