// SPDX-License-Identifier: MIT
// Reading a TZif file (tzif.hpp): the two headers (RFC 8536 section 3.1) give the sizes of the
// v1 and v2+ data blocks; the footer follows as `\n<rule>\n` at the end of the file. A build
// without date-tz also reads the listed offsets, for the local zone. Cold: once per zone, under
// the zone registry's lock.
#include "encode/tzif.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace fieldlog::detail {

namespace {

constexpr std::size_t header_size = 44;
// Zone files are a few KiB; anything far larger is not one.
constexpr std::size_t max_file_size = 1 << 22;

std::uint32_t be32(std::string_view b, std::size_t at) noexcept {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
    return v;
}

std::int64_t be64(std::string_view b, std::size_t at) noexcept {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
    return static_cast<std::int64_t>(v);
}

/// A header's counts (RFC 8536 section 3.1), in file order.
struct Counts {
    std::uint64_t isut, isstd, leap, time, type, chars;

    /// Bytes of the data block after this header, with `time_size`-byte times.
    [[nodiscard]] std::uint64_t data_size(std::uint64_t time_size) const noexcept {
        return time * time_size + time + type * 6 + chars + leap * (time_size + 4) + isstd + isut;
    }
};

/// The header at `at`, or nullopt when it is cut short or is not one.
std::optional<Counts> header_at(std::string_view file, std::size_t at, std::string& error) {
    if (file.size() < at + header_size || file.substr(at, 4) != "TZif") {
        error = "not a TZif file";
        return std::nullopt;
    }
    return Counts{be32(file, at + 20), be32(file, at + 24), be32(file, at + 28),
                  be32(file, at + 32), be32(file, at + 36), be32(file, at + 40)};
}

/// The directory date reads zone files from.
std::string zoneinfo_dir() {
    // date 3.0.1's discover_tz_dir: buildroot's uclibc tree when present, else the standard one.
    struct stat sb {};
    if (::stat("/usr/share/zoneinfo/uclibc", &sb) == 0 && S_ISDIR(sb.st_mode)) return "/usr/share/zoneinfo/uclibc";
    return "/usr/share/zoneinfo";
}

/// The bytes of the file at `path`; nullopt when it cannot be read or is too large to be a zone.
std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0 || static_cast<std::uint64_t>(size) > max_file_size) return std::nullopt;
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.seekg(0);
    if (!in.read(bytes.data(), size)) return std::nullopt;
    return bytes;
}

}  // namespace

std::optional<ZoneFooter> read_tzif_footer(std::string_view file, std::string& error) {
    const auto v1 = header_at(file, 0, error);
    if (!v1) return std::nullopt;
    if (file[4] == '\0') {
        error = "a version 1 TZif file has no footer";
        return std::nullopt;
    }
    const std::uint64_t v2_at = header_size + v1->data_size(4);
    if (v2_at > file.size()) {
        error = "the TZif file is cut short";
        return std::nullopt;
    }
    const auto v2 = header_at(file, static_cast<std::size_t>(v2_at), error);
    if (!v2) return std::nullopt;
    const std::uint64_t data_at = v2_at + header_size;
    const std::uint64_t footer_at = data_at + v2->data_size(8);
    if (footer_at > file.size()) {
        error = "the TZif file is cut short";
        return std::nullopt;
    }
    ZoneFooter footer;
    footer.rule_from = v2->time == 0 ? std::numeric_limits<std::int64_t>::min()
                                     : be64(file, static_cast<std::size_t>(data_at + (v2->time - 1) * 8));
    const std::string_view rest = file.substr(static_cast<std::size_t>(footer_at));
    if (rest.size() < 2 || rest.front() != '\n' || rest.back() != '\n' || rest.find('\n', 1) != rest.size() - 1) {
        error = "the TZif footer is not one line between newlines";
        return std::nullopt;
    }
    const std::string_view text = rest.substr(1, rest.size() - 2);
    if (text.empty()) {
        error = "the TZif footer is empty";
        return std::nullopt;
    }
    auto rule = parse_posix_tz(text);
    if (!rule) {
        error = "the TZif footer \"" + std::string(text) + "\" is not a POSIX TZ rule";
        return std::nullopt;
    }
    footer.rule = std::move(*rule);
    return footer;
}

void report_footer_fallback(std::string_view name, std::string_view why) {
    std::fprintf(stderr, "fieldlog: time zone %.*s: %.*s; after its last listed transition its offset stays as then\n",
                 static_cast<int>(name.size()), name.data(), static_cast<int>(why.size()), why.data());
}

std::optional<ZoneFooter> zone_footer(std::string_view name, const std::optional<std::string>& file,
                                      const std::function<std::int32_t(std::int64_t)>& table_offset) {
    if (!file) {
        report_footer_fallback(name, "its TZif file cannot be read");
        return std::nullopt;
    }
    std::string error;
    auto footer = read_tzif_footer(*file, error);
    if (!footer) {
        report_footer_fallback(name, error);
        return std::nullopt;
    }
    // RFC 8536 wants the footer to agree with the last listed offset; one that does not would
    // move the offset on the transition itself.
    // (Far beyond any wall time a transition changes nothing written; rule_span_at wants |s| < 2^50.)
    const std::int64_t at = footer->rule_from == std::numeric_limits<std::int64_t>::min()
                                ? 0
                                : std::clamp(footer->rule_from, -(std::int64_t{1} << 40), std::int64_t{1} << 40);
    if (whole_minutes(rule_span_at(footer->rule, at).offset) != table_offset(at)) {
        report_footer_fallback(name, "its TZif footer disagrees with its last listed offset");
        return std::nullopt;
    }
    return footer;
}

std::optional<std::vector<ListedOffset>> read_tzif_offsets(std::string_view file, std::string& error) {
    const auto v1 = header_at(file, 0, error);
    if (!v1) return std::nullopt;
    std::size_t data_at = header_size;
    std::uint64_t time_size = 4;
    Counts counts = *v1;
    if (file[4] != '\0') {  // version 2 or later: the 64-bit block after the v1 one
        const std::uint64_t v2_at = header_size + v1->data_size(4);
        const auto v2 = v2_at <= file.size() ? header_at(file, static_cast<std::size_t>(v2_at), error) : std::nullopt;
        if (!v2) {
            if (error.empty()) error = "the TZif file is cut short";
            return std::nullopt;
        }
        data_at = static_cast<std::size_t>(v2_at + header_size);
        time_size = 8;
        counts = *v2;
    }
    if (counts.type == 0 || data_at + counts.data_size(time_size) > file.size()) {
        error = "the TZif file is cut short or lists no local time type";
        return std::nullopt;
    }
    const std::size_t indices_at = data_at + static_cast<std::size_t>(counts.time * time_size);
    const std::size_t types_at = indices_at + static_cast<std::size_t>(counts.time);
    const auto offset_of = [&](std::size_t type) { return static_cast<std::int32_t>(be32(file, types_at + 6 * type)); };
    std::vector<ListedOffset> listed{{std::numeric_limits<std::int64_t>::min(), offset_of(0)}};
    for (std::size_t i = 0; i < counts.time; ++i) {
        const auto type = static_cast<unsigned char>(file[indices_at + i]);
        if (type >= counts.type) {
            error = "a TZif transition names a local time type the file does not have";
            return std::nullopt;
        }
        const std::size_t at = data_at + i * static_cast<std::size_t>(time_size);
        const std::int64_t from = time_size == 8 ? be64(file, at) : static_cast<std::int32_t>(be32(file, at));
        listed.push_back({from, offset_of(type)});
    }
    return listed;
}

std::optional<std::string> read_local_zone_file(std::string& name) {
    std::string path = "/etc/localtime";
    if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
        std::string_view value = tz;
        if (value.front() == ':') value.remove_prefix(1);
        path = value.starts_with('/') ? std::string(value) : zoneinfo_dir() + "/" + std::string(value);
    }
    std::string target = path;
    char link[4096];
    if (const ssize_t n = ::readlink(path.c_str(), link, sizeof link); n > 0 && static_cast<std::size_t>(n) < sizeof link) {
        target.assign(link, static_cast<std::size_t>(n));
    }
    const std::size_t tail = target.rfind("zoneinfo/");
    name = tail != std::string::npos ? target.substr(tail + 9) : path;
    return read_file(path);
}

std::optional<std::string> read_zone_file(std::string_view name) { return read_file(zoneinfo_dir() + "/" + std::string(name)); }

}  // namespace fieldlog::detail
