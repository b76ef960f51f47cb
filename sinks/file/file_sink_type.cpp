// SPDX-License-Identifier: MIT
// The file sink as a configuration names it (`type = "file"`): its keys, read into
// FileSinkOptions, and what configure() makes of those options. A path that cannot be written
// is refused while the file is read, naming the key, before configure() tries to open it.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "base/quoting.hpp"
#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/file_sink.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const FileSinkOptions& options) {
    try {
        return std::make_shared<FileSink>(options);
    } catch (const std::system_error& e) {
        throw std::runtime_error(fmt::format("cannot open \"{}\" for writing: {}", options.path, e.code().message()));
    }
}

SinkDestination sink_destination(const FileSinkOptions& options) {
    return {.kind = "file", .target = options.path, .exclusive = true};
}

namespace detail {
namespace {

/// Why `path` cannot be opened for appending, without creating anything ("" when it can):
/// the file must be writable, or its nearest existing ancestor a writable directory.
std::string unwritable_reason(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::exists(status)) {
        if (fs::is_directory(status)) return std::generic_category().message(EISDIR);
        return ::access(path.c_str(), W_OK) == 0 ? std::string{} : std::generic_category().message(errno);
    }
    if (error && error != std::errc::no_such_file_or_directory) return error.message();
    fs::path ancestor = fs::path(path).parent_path();
    for (;;) {
        if (ancestor.empty()) ancestor = ".";
        const fs::file_status ancestor_status = fs::status(ancestor, error);
        if (fs::exists(ancestor_status)) {
            if (!fs::is_directory(ancestor_status)) return std::generic_category().message(ENOTDIR);
            return ::access(ancestor.c_str(), W_OK | X_OK) == 0 ? std::string{} : std::generic_category().message(errno);
        }
        if (error && error != std::errc::no_such_file_or_directory) return error.message();
        if (ancestor == ancestor.root_path() || ancestor == ".") return std::generic_category().message(ENOENT);
        ancestor = ancestor.parent_path();
    }
}

/// Permission bits as an octal string, "0640" or "640": a TOML integer would be read as
/// decimal unless written 0o640, an easy slip. At most 0777, and the owner may write.
unsigned file_mode(const SinkSettings& settings, unsigned fallback) {
    constexpr std::string_view what = "an octal mode like \"0640\" (0777 at most, with the owner's write bit 0200)";
    if (!settings.has("mode")) return fallback;
    const std::string digits = settings.text("mode", what);
    unsigned mode = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), mode, 8);
    if (digits.size() < 3 || digits.size() > 4 || error != std::errc{} || end != digits.data() + digits.size() ||
        mode > 0777 || (mode & 0200) == 0) {
        settings.expected("mode", what);
    }
    return mode;
}

FileSinkOptions file_options(SinkSettings& settings) {
    FileSinkOptions file;
    if (settings.has("path")) {
        file.path = settings.text("path", "a file path");
        if (file.path.empty()) settings.expected("path", "a file path");
        if (const std::string reason = unwritable_reason(file.path); !reason.empty()) {
            settings.fail("path", fmt::format("cannot open {} for writing: {}", in_quotes(file.path), reason));
        }
        settings.identify_by("path");
    }
    file.max_size = settings.size("max_size", file.max_size, "100MiB");
    file.rotate_every = settings.choice<RotateEvery>(
        "rotate", file.rotate_every, {{"never", RotateEvery::never}, {"hourly", RotateEvery::hour}, {"daily", RotateEvery::day}});
    file.rotate_utc = settings.boolean("rotate_utc", file.rotate_utc);
    file.keep = static_cast<unsigned>(
        settings.integer("keep", file.keep, 0, std::numeric_limits<unsigned>::max(), "a number of files"));
    file.max_age = settings.duration("max_age", file.max_age, "168h");
    file.max_total_bytes = settings.size("max_total_bytes", file.max_total_bytes, "1GiB");
    file.compress = settings.choice<FileCompression>("compress", file.compress,
                                                     {{"none", FileCompression::none}, {"gzip", FileCompression::gzip}});
    file.compression_level = static_cast<int>(settings.integer("compression_level", file.compression_level, 1, 9,
                                                               "a zlib level (1 fastest, 9 smallest)"));
    file.buffer_size = settings.size("buffer", file.buffer_size, "64KiB");
    file.flush_interval = settings.duration("flush_interval", file.flush_interval, "1s");
    file.flush_level = settings.level("flush_level", file.flush_level);
    file.fsync_on_flush = settings.boolean("fsync", file.fsync_on_flush);
    file.reopen_check = settings.duration("reopen_check", file.reopen_check, "1s");
    file.mode = file_mode(settings, file.mode);
    file.follow_symlinks = settings.boolean("follow_symlinks", file.follow_symlinks);
    if (file.path.empty()) settings.missing("path", "a file sink writes to a file");
    return file;
}

}  // namespace

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType file_sink_type() {
    return {"file",
            {"path", "max_size", "rotate", "rotate_utc", "keep", "max_age", "max_total_bytes", "compress",
             "compression_level", "buffer", "flush_interval", "flush_level", "fsync", "reopen_check", "mode",
             "follow_symlinks"},
            [](SinkSettings& settings) -> SinkTarget { return file_options(settings); }};
}

}  // namespace detail
}  // namespace fieldlog
