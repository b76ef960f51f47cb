// SPDX-License-Identifier: MIT
// The file sink: buffering, flush policy and fsync, rotation by size and time (UTC and local),
// reopening after a rename or delete, torn last lines, full disks (/dev/full and a tiny tmpfs),
// the mode of the files it makes and paths that are symbolic links.
#include <catch2/catch.hpp>
#include <date/date.h>
#include <date/tz.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/deliver.hpp"
#include "support/test_support.hpp"

using fieldlog_test::deliver;
using fieldlog_test::jsonl_file_errors;
using fieldlog_test::read_file;
using fieldlog_test::read_lines;
using fieldlog_test::StderrTo;
using fieldlog_test::TempDir;
using fieldlog_test::wait_until;
using namespace std::chrono_literals;

namespace {

/// A JSON line numbered `n`, padded to about `size` bytes, with its '\n'.
std::string numbered(int n, std::size_t size = 60) {
    std::string line = "{\"n\":" + std::to_string(n) + ",\"pad\":\"";
    line.append(size > line.size() + 3 ? size - line.size() - 3 : 0, 'x');
    return line + "\"}\n";
}

fieldlog::RecordView view(const std::string& line, fieldlog::Level level = fieldlog::Level::info,
                          fieldlog::Timestamp time = fieldlog::Timestamp(std::chrono::system_clock::now())) {
    return fieldlog::RecordView{{line.data(), line.size()}, level, time};
}

/// The `n` of each line of `path`.
std::vector<int> numbers_in(const std::string& path) {
    std::vector<int> numbers;
    for (const std::string& line : read_lines(path)) numbers.push_back(std::stoi(line.substr(5)));
    return numbers;
}

/// Sets TZ for one scope and calls tzset(3): the local time of localtime_r(3) and mktime(3).
class LocalZone {
public:
    explicit LocalZone(const char* zone) {
        if (const char* old = std::getenv("TZ")) old_ = old;
        ::setenv("TZ", zone, 1);
        ::tzset();
    }
    ~LocalZone() {
        if (old_) {
            ::setenv("TZ", old_->c_str(), 1);
        } else {
            ::unsetenv("TZ");
        }
        ::tzset();
    }
    LocalZone(const LocalZone&) = delete;
    LocalZone& operator=(const LocalZone&) = delete;

private:
    std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("a file sink buffers whole records until flush, and what it was handed is counted", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("logs/app.log");  // the directory is created
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms});
    fieldlog::FileSink buffered({.path = dir.file("buffered.log")});

    const std::string a = numbered(1), b = numbered(2);
    deliver(buffered, view(a));
    deliver(buffered, view(b));
    CHECK(read_file(dir.file("buffered.log")).empty());  // still in the userspace buffer
    CHECK(buffered.counters().records == 2);
    CHECK(buffered.counters().bytes == a.size() + b.size());
    buffered.flush();
    CHECK(read_file(dir.file("buffered.log")) == a + b);
    CHECK(buffered.counters().dropped == 0);

    deliver(sink, view(a));  // flush_interval 0: every call reaches the file
    CHECK(read_file(path) == a);
}

TEST_CASE("a record at flush_level or above reaches the file at once", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::FileSink sink({.path = path, .flush_interval = 60000ms, .flush_level = fieldlog::Level::warn});
    const std::string info = numbered(1), warn = numbered(2);
    deliver(sink, view(info, fieldlog::Level::info));
    CHECK(read_file(path).empty());
    deliver(sink, view(warn, fieldlog::Level::warn));
    CHECK(read_file(path) == info + warn);
}

TEST_CASE("fsync_on_flush syncs after each flush that wrote something, and a failed fsync is counted", "[file_sink]") {
    // /dev/null takes write(2) but refuses fsync(2) with EINVAL: each fsync the sink makes shows.
    const TempDir dir;
    const std::string report = dir.file("stderr.txt");
    for (const bool fsync_on_flush : {false, true}) {
        DYNAMIC_SECTION("fsync_on_flush = " << fsync_on_flush) {
            fieldlog::FileSink sink({.path = "/dev/null", .flush_interval = 60000ms, .fsync_on_flush = fsync_on_flush,
                                     .reopen_check = 0ms});
            {
                const StderrTo capture(report);
                deliver(sink, view(numbered(1)));
                deliver(sink, view(numbered(2)));
                sink.flush();  // writes both, then fsync
                sink.flush();  // nothing written since: no fsync
                deliver(sink, view(numbered(3), fieldlog::Level::error));  // written at once, then fsync
                sink.flush();  // nothing left to write: no fsync
            }
            const fieldlog::SinkCounters counters = sink.counters();
            CHECK(counters.records == 3);
            CHECK(counters.dropped == 0);
            CHECK(counters.errors == (fsync_on_flush ? 2 : 0));
            // Two failures within a second: one line.
            CHECK(read_file(report) == (fsync_on_flush ? "fieldlog: file sink /dev/null: fsync: Invalid argument\n" : ""));
        }
    }
    SECTION("a regular file: synced without error, the records are in it after flush") {
        const std::string path = dir.file("app.log");
        fieldlog::FileSink sink({.path = path, .flush_interval = 60000ms, .fsync_on_flush = true});
        const std::string a = numbered(1), b = numbered(2);
        deliver(sink, view(a));
        deliver(sink, view(b));
        CHECK(read_file(path).empty());
        sink.flush();
        CHECK(read_file(path) == a + b);
        CHECK(sink.counters().errors == 0);
    }
}

TEST_CASE("buffered records reach the file after flush_interval without another record", "[file_sink]") {
    // Through configure(): the dispatcher's background tick calls tick() under the sink's mutex.
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::configure({.level = fieldlog::Level::info,
                         .sinks = {{.target = fieldlog::FileSinkOptions{.path = path, .flush_interval = 30ms}}}});
    fieldlog::get("file_sink.tick").info("waits for the tick");
    CHECK(read_file(path).empty());  // a 256 KiB buffer and no flush_level record: nothing yet
    CHECK(wait_until([&] { return read_lines(path).size() == 1; }));
    CHECK(fieldlog::metrics().sinks.at(0).counters.records == 1);
    fieldlog_test::release_sinks();
}

TEST_CASE("size rotation keeps N files, each within the limit and on record boundaries", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::uint64_t limit = 1000;
    {
        fieldlog::FileSink sink({.path = path, .buffer_size = 256, .max_size = limit, .keep = 3});
        for (int n = 0; n < 200; ++n) deliver(sink, view(numbered(n, 40 + static_cast<std::size_t>(n % 7) * 9)));
    }
    CHECK_FALSE(std::filesystem::exists(path + ".4"));
    CHECK_FALSE(std::filesystem::exists(dir.file(".app.log.rotating")));
    std::vector<int> all;
    for (const std::string& name : {path + ".3", path + ".2", path + ".1", path}) {
        INFO(name);
        REQUIRE(std::filesystem::exists(name));
        const std::string text = read_file(name);
        CHECK(text.size() <= limit);
        if (name != path) CHECK(text.size() > limit - 100);  // rotated only when the next record did not fit
        CHECK(text.back() == '\n');
        CHECK(jsonl_file_errors(name).empty());
        const std::vector<int> numbers = numbers_in(name);
        all.insert(all.end(), numbers.begin(), numbers.end());
    }
    // The four files hold the newest records, in order, none twice.
    REQUIRE_FALSE(all.empty());
    CHECK(all.back() == 199);
    for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i] == all[i - 1] + 1);
}

TEST_CASE("a record larger than max_size gets a file of its own", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 200, .keep = 2});
    const std::string small = numbered(1), big = numbered(2, 500), after = numbered(3);
    deliver(sink, view(small));
    deliver(sink, view(big));
    deliver(sink, view(after));
    CHECK(read_file(path + ".2") == small);
    CHECK(read_file(path + ".1") == big);
    CHECK(read_file(path) == after);
}

TEST_CASE("a rotation that cannot open the new file keeps every old file and retries later", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    std::filesystem::create_directory(dir.file(".app.log.rotating"));  // open() of the new file fails: EISDIR
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 100, .keep = 2});
    {
        const StderrTo quiet;  // the failure is reported there
        deliver(sink, view(numbered(1, 80)));
        deliver(sink, view(numbered(2, 80)));  // would rotate: cannot, so it stays in app.log
    }
    CHECK(numbers_in(path) == std::vector<int>{1, 2});
    CHECK_FALSE(std::filesystem::exists(path + ".1"));
    CHECK(sink.counters().errors == 1);
    CHECK(sink.counters().records == 2);

    std::filesystem::remove(dir.file(".app.log.rotating"));
    std::this_thread::sleep_for(1100ms);  // failed rotations are retried after a second
    deliver(sink, view(numbered(3, 80)));
    CHECK(numbers_in(path + ".1") == std::vector<int>{1, 2});
    CHECK(numbers_in(path) == std::vector<int>{3});
}

TEST_CASE("keep = 0 starts a new file and drops the old one only after it opened", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 100, .keep = 0});
    deliver(sink, view(numbered(1, 80)));
    deliver(sink, view(numbered(2, 80)));
    CHECK(numbers_in(path) == std::vector<int>{2});
    CHECK_FALSE(std::filesystem::exists(path + ".1"));
}

TEST_CASE("time rotation starts a new file at the next hour or day boundary", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const auto now = fieldlog::Timestamp(std::chrono::system_clock::now());
    const struct {
        const char* name;
        fieldlog::RotateEvery every;
        bool utc;
        std::int64_t step;
    } cases[] = {{"hourly UTC", fieldlog::RotateEvery::hour, true, 3600},
                 {"daily UTC", fieldlog::RotateEvery::day, true, 86400},
                 {"hourly local", fieldlog::RotateEvery::hour, false, 3600},
                 {"daily local", fieldlog::RotateEvery::day, false, 86400}};
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .rotate_every = c.every, .rotate_utc = c.utc});
            const std::string first = numbered(1), second = numbered(2), third = numbered(3);
            deliver(sink, view(first, fieldlog::Level::info, now));
            deliver(sink, view(second, fieldlog::Level::info, now));  // same period: same file
            deliver(sink, view(third, fieldlog::Level::info, {now.seconds + 2 * c.step, 0}));  // past the next boundary
            CHECK(read_file(path + ".1") == first + second);
            CHECK(read_file(path) == third);
        }
    }
}

TEST_CASE("local time rotation splits at local midnight and at the local top of the hour", "[file_sink]") {
    // The sink takes its first boundary from the real clock when it opens the file, so the
    // records straddle the next real boundaries, which the date library's tz database names.
    const struct {
        const char* name;
        const char* zone;
        fieldlog::RotateEvery every;
    } cases[] = {{"daily, TZ=Europe/Berlin", "Europe/Berlin", fieldlog::RotateEvery::day},
                 {"hourly, TZ=Asia/Kolkata (UTC+05:30)", "Asia/Kolkata", fieldlog::RotateEvery::hour}};
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.name) {
            const LocalZone local(c.zone);
            const TempDir dir;
            const std::string path = dir.file("app.log");
            fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .rotate_every = c.every, .reopen_check = 0ms});

            const date::time_zone* zone = date::locate_zone(c.zone);
            const auto now = zone->to_local(date::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
            const bool daily = c.every == fieldlog::RotateEvery::day;
            const date::local_seconds period = daily ? date::local_seconds(date::floor<date::days>(now))
                                                     : date::floor<std::chrono::hours>(now);
            const std::chrono::seconds step = daily ? std::chrono::seconds(date::days(1)) : std::chrono::seconds(1h);
            const auto boundary = [&](int n) {  // the n-th local midnight / top of the hour from now
                return static_cast<std::int64_t>(zone->to_sys(period + n * step).time_since_epoch().count());
            };
            const std::int64_t first = boundary(1), second = boundary(2);
            CHECK(first % (daily ? 86400 : 3600) != 0);  // not a UTC boundary: UTC rotation would fail here

            const std::string just_before = numbered(1), at_first = numbered(2), before_second = numbered(3),
                              at_second = numbered(4);
            deliver(sink, view(just_before, fieldlog::Level::info, {first - 1, 999'999'999}));  // 1 ns before
            deliver(sink, view(at_first, fieldlog::Level::info, {first, 0}));
            deliver(sink, view(before_second, fieldlog::Level::info, {second - 1, 999'999'999}));
            deliver(sink, view(at_second, fieldlog::Level::info, {second, 0}));
            // path.1 is the newest rotated file, path.2 the one before.
            CHECK(read_file(path + ".2") == just_before);
            CHECK(read_file(path + ".1") == at_first + before_second);
            CHECK(read_file(path) == at_second);
        }
    }
}

TEST_CASE("reopen() lets go of a file logrotate renamed", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::FileSink sink({.path = path, .reopen_check = 0ms});
    const std::string before = numbered(1), between = numbered(2), after = numbered(3);
    deliver(sink, view(before));
    std::filesystem::rename(path, path + ".old");
    deliver(sink, view(between));  // still buffered for the old file
    sink.reopen();
    deliver(sink, view(after));
    sink.flush();
    CHECK(read_file(path + ".old") == before + between);
    CHECK(read_file(path) == after);
}

TEST_CASE("the periodic check reopens a replaced or deleted file", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .reopen_check = 10ms});
    int n = 0;
    deliver(sink, view(numbered(n++)));
    bool replaced = false;
    SECTION("replaced by a new file") {
        std::filesystem::rename(path, path + ".1");
        std::ofstream(path).close();
        replaced = true;
    }
    SECTION("deleted") {
        std::filesystem::remove(path);
    }
    // Records go to the old file until the check notices; then to the file at `path`.
    REQUIRE(wait_until([&] {
        sink.tick(std::chrono::steady_clock::now());  // what the background tick does
        deliver(sink, view(numbered(n++)));
        return std::filesystem::exists(path) && !read_file(path).empty();
    }));
    const std::vector<int> in_new = numbers_in(path);
    REQUIRE_FALSE(in_new.empty());
    CHECK(in_new.back() == n - 1);
    for (std::size_t i = 1; i < in_new.size(); ++i) CHECK(in_new[i] == in_new[i - 1] + 1);
    if (replaced) {
        std::vector<int> all = numbers_in(path + ".1");
        all.insert(all.end(), in_new.begin(), in_new.end());
        REQUIRE(all.size() == static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) CHECK(all[static_cast<std::size_t>(i)] == i);
    }
}

TEST_CASE("a file whose last record was torn gets the next record on a fresh line", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    {
        std::ofstream torn(path, std::ios::binary);
        torn << numbered(1) << "{\"n\":2,\"pad\":\"xx";  // a crash mid-record
    }
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms});
    const std::string next = numbered(3);
    deliver(sink, view(next));
    const std::vector<std::string> lines = read_lines(path);
    REQUIRE(lines.size() == 3);
    CHECK(lines[2] + "\n" == next);
}

TEST_CASE("records logged from many threads through a rotating file are all there once", "[file_sink][concurrent]") {
    for (const auto compress : {fieldlog::FileCompression::none, fieldlog::FileCompression::gzip}) {
        DYNAMIC_SECTION((compress == fieldlog::FileCompression::gzip ? "compressed" : "plain")) {
            const TempDir dir;
            const std::string path = dir.file("app.log");
            fieldlog::configure({.level = fieldlog::Level::info,
                                 .sinks = {{.target = fieldlog::FileSinkOptions{.path = path, .max_size = 64 * 1024,
                                                                                .keep = 50, .compress = compress,
                                                                                .compression_level = 1}}}});
            constexpr int kThreads = 4, kPerThread = 5000;
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([t] {
                    const auto log = fieldlog::get("rotating");
                    for (int i = 0; i < kPerThread; ++i) log.info("record", {{"thread", t}, {"seq", i}});
                });
            }
            for (std::thread& thread : threads) thread.join();
            fieldlog::flush();  // every rotation made
            if (compress == fieldlog::FileCompression::gzip) {
                CHECK(wait_until([&] {
                    for (int n = 1; n <= 50; ++n) {
                        const std::string slot = std::to_string(n);  // plain, or hidden while compressed
                        if (std::filesystem::exists(path + "." + slot) ||
                            std::filesystem::exists(dir.file(".app.log." + slot + ".compressing"))) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            fieldlog::shutdown();

            std::map<int, int> next_seq;
            int files = 0, compressed = 0;
            for (int n = 50; n >= 0; --n) {
                const std::string name = n == 0 ? path : path + "." + std::to_string(n);
                INFO(name);
                std::string text;
                if (std::filesystem::exists(name + ".gz")) {
                    CHECK_FALSE(std::filesystem::exists(name));  // one form of each file
                    const std::optional<std::string> inflated = fieldlog_test::gunzip(name + ".gz");
                    REQUIRE(inflated);
                    text = *inflated;
                    ++compressed;
                } else if (std::filesystem::exists(name)) {
                    text = read_file(name);
                } else {
                    continue;
                }
                ++files;
                CHECK(text.back() == '\n');
                CHECK(text.size() <= 64 * 1024);
                for (std::size_t at = 0; at < text.size();) {
                    const std::size_t end = text.find('\n', at);
                    const std::string line = text.substr(at, end - at);
                    at = end + 1;
                    const auto thread_at = line.find("\"thread\":"), seq_at = line.find("\"seq\":");
                    REQUIRE(thread_at != std::string::npos);
                    REQUIRE(seq_at != std::string::npos);
                    const int thread = std::stoi(line.substr(thread_at + 9)), seq = std::stoi(line.substr(seq_at + 6));
                    REQUIRE(seq == next_seq[thread]);  // none lost, none twice, in order
                    ++next_seq[thread];
                }
            }
            CHECK(files > 5);
            CHECK(compressed == (compress == fieldlog::FileCompression::gzip ? files - 1 : 0));
            CHECK_FALSE(std::filesystem::exists(path + ".gz.tmp"));
            for (int t = 0; t < kThreads; ++t) CHECK(next_seq[t] == kPerThread);
        }
    }
}

TEST_CASE("reopen_files() reopens the running file sinks", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::configure({.level = fieldlog::Level::info,
                         .sinks = {{.target = fieldlog::FileSinkOptions{.path = path, .reopen_check = 0ms}}}});
    const auto log = fieldlog::get("reopen");
    log.info("before");
    std::filesystem::rename(path, path + ".1");
    fieldlog::reopen_files();
    log.info("after");
    fieldlog::shutdown();
    CHECK(read_lines(path + ".1").size() == 1);
    REQUIRE(read_lines(path).size() == 1);
    CHECK(read_lines(path)[0].find("\"msg\":\"after\"") != std::string::npos);
}

TEST_CASE("reload() reopens the file sinks the configuration keeps", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::string config = dir.file("fieldlog.toml");
    std::ofstream(config) << "level = \"info\"\n[[sinks]]\ntype = \"file\"\npath = \"" << path << "\"\n";
    fieldlog::configure(fieldlog::Config::load(config));
    const auto log = fieldlog::get("reload");
    log.info("before");
    std::filesystem::rename(path, path + ".1");
    fieldlog::reload();
    log.info("after");
    fieldlog::shutdown();
    CHECK(read_lines(path + ".1").size() == 1);
    REQUIRE(read_lines(path).size() == 1);
    CHECK(read_lines(path)[0].find("\"msg\":\"after\"") != std::string::npos);
}

TEST_CASE("the crash path writes the buffered records, then its own, without the lock", "[file_sink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    fieldlog::FileSink sink({.path = path, .flush_interval = 60000ms});
    const std::string a = numbered(1), b = numbered(2), last = numbered(3);
    deliver(sink, view(a));
    deliver(sink, view(b));
    CHECK(read_file(path).empty());
    const fieldlog::RecordView last_view = view(last);
    sink.write_on_crash({&last_view, 1});
    CHECK(read_file(path) == a + b + last);
    sink.flush();  // nothing is written twice
    CHECK(read_file(path) == a + b + last);
}

TEST_CASE("writing to /dev/full drops and counts records and reports once a second", "[file_sink]") {
    const TempDir dir;
    const std::string report = dir.file("stderr.txt");
    fieldlog::FileSink sink({.path = "/dev/full", .reopen_check = 0ms});
    {
        const StderrTo capture(report);
        for (int n = 0; n < 10; ++n) deliver(sink, view(numbered(n)));
        sink.flush();
        deliver(sink, view(numbered(10), fieldlog::Level::error));  // flushes at once: fails again
    }
    const fieldlog::SinkCounters counters = sink.counters();
    CHECK(counters.records == 11);
    CHECK(counters.dropped == 11);
    CHECK(counters.errors == 2);
    // Two failures within a second: one line, with the errno text.
    CHECK(read_file(report) == "fieldlog: file sink /dev/full: write: No space left on device\n");
}

TEST_CASE("a full disk cuts the file back to the last whole record and logging resumes", "[file_sink][root]") {
    if (::geteuid() != 0) FIELDLOG_TEST_SKIP("mounting a 64 KiB tmpfs needs root");
    const TempDir dir;
    const std::string mount_point = dir.file("tiny");
    std::filesystem::create_directories(mount_point);
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
        FIELDLOG_TEST_SKIP("cannot mount a tmpfs here: " << std::strerror(errno));
    }
    struct Unmount {
        std::string path;
        ~Unmount() { ::umount(path.c_str()); }
    } unmount{mount_point};

    const std::string filler = mount_point + "/filler";
    std::ofstream(filler, std::ios::binary) << std::string(24 * 1024, 'f');
    const std::string path = mount_point + "/app.log";
    fieldlog::FileSink sink({.path = path, .buffer_size = 4096, .flush_interval = 60000ms});

    const StderrTo quiet;  // the sink reports the full disk there
    int n = 0;
    while (sink.counters().dropped == 0 && n < 10000) {
        deliver(sink, view(numbered(n++, 300)));
    }
    sink.flush();
    const fieldlog::SinkCounters full = sink.counters();
    REQUIRE(full.dropped > 0);
    CHECK(full.errors > 0);
    CHECK(full.records == static_cast<std::uint64_t>(n));
    const std::string text = read_file(path);
    CHECK(text.size() == 300 * (full.records - full.dropped));  // every record is 300 bytes
    CHECK(text.back() == '\n');
    CHECK(jsonl_file_errors(path).empty());
    CHECK(numbers_in(path).size() == full.records - full.dropped);

    std::filesystem::remove(filler);  // space returns
    const int resumed_from = n;
    for (int i = 0; i < 20; ++i) deliver(sink, view(numbered(n++, 300)));
    sink.flush();
    const fieldlog::SinkCounters after = sink.counters();
    CHECK(after.dropped == full.dropped);
    CHECK(after.records == full.records + 20);
    CHECK(numbers_in(path).back() == resumed_from + 19);
    CHECK(jsonl_file_errors(path).empty());
}

namespace {

/// The permission bits of `name` (not following a link).
unsigned mode_of(const std::string& name) {
    struct stat st {};
    REQUIRE(::lstat(name.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

/// Sets the process's umask for one scope.
class Umask {
public:
    explicit Umask(mode_t mask) : old_(::umask(mask)) {}
    ~Umask() { ::umask(old_); }
    Umask(const Umask&) = delete;
    Umask& operator=(const Umask&) = delete;

private:
    mode_t old_;
};

}  // namespace

TEST_CASE("a file the sink creates is 0640 by default or the mode asked for, whatever the umask", "[file_sink][mode]") {
    const TempDir dir;
    const Umask strict(0077);  // would take the group's bits off
    {
        fieldlog::FileSink sink({.path = dir.file("default.log")});
    }
    CHECK(mode_of(dir.file("default.log")) == 0640);
    const Umask usual(0027);  // would take the others' bits off
    {
        fieldlog::FileSink sink({.path = dir.file("custom.log"), .mode = 0604});
    }
    CHECK(mode_of(dir.file("custom.log")) == 0604);
    // A file that exists keeps its own mode.
    std::ofstream(dir.file("existing.log")) << numbered(1);
    std::filesystem::permissions(dir.file("existing.log"), std::filesystem::perms(0660));
    {
        fieldlog::FileSink sink({.path = dir.file("existing.log")});
    }
    CHECK(mode_of(dir.file("existing.log")) == 0660);
}

TEST_CASE("a mode that is not permission bits the owner can write with is refused", "[file_sink][mode]") {
    const TempDir dir;
    CHECK_THROWS_WITH(fieldlog::FileSink({.path = dir.file("a.log"), .mode = 0440}),
                      "mode: 0440 must be permission bits (0777 at most) that let the owner write (0200)");
    CHECK_THROWS_WITH(fieldlog::FileSink({.path = dir.file("a.log"), .mode = 04640}),
                      "mode: 4640 must be permission bits (0777 at most) that let the owner write (0200)");
    CHECK_FALSE(std::filesystem::exists(dir.file("a.log")));
}

TEST_CASE("rotated and compressed files keep the mode of the live file", "[file_sink][mode]") {
    for (const auto compress : {fieldlog::FileCompression::none, fieldlog::FileCompression::gzip}) {
        DYNAMIC_SECTION((compress == fieldlog::FileCompression::gzip ? "compressed" : "plain")) {
            const TempDir dir;
            const Umask usual(0022);
            const std::string path = dir.file("app.log");
            fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 100, .keep = 3, .compress = compress,
                                     .mode = 0620});
            for (int n = 0; n < 3; ++n) deliver(sink, view(numbered(n, 80)));  // two rotations
            const std::string suffix = compress == fieldlog::FileCompression::gzip ? ".gz" : "";
            REQUIRE(wait_until([&] {
                return std::filesystem::exists(path + ".1" + suffix) && std::filesystem::exists(path + ".2" + suffix);
            }));
            CHECK(mode_of(path) == 0620);
            CHECK(mode_of(path + ".1" + suffix) == 0620);
            CHECK(mode_of(path + ".2" + suffix) == 0620);
        }
    }
}

TEST_CASE("a path that is a symbolic link is refused unless follow_symlinks allows it", "[file_sink][symlink]") {
    const TempDir dir;
    const std::string path = dir.file("app.log"), target = dir.file("elsewhere.log");
    std::filesystem::create_symlink(target, path);  // dangling: open(O_CREAT) would make the target
    const std::string refusal = "\"" + path + "\" is a symbolic link; set follow_symlinks = true to allow it";
    CHECK_THROWS_WITH(fieldlog::FileSink({.path = path}), refusal);
    CHECK_THROWS_WITH(fieldlog::configure({.sinks = {{.target = fieldlog::FileSinkOptions{.path = path}}}}),
                      "sinks[0]: " + refusal);
    CHECK_FALSE(std::filesystem::exists(target));

    {
        const Umask usual(0022);
        fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .follow_symlinks = true});
        deliver(sink, view(numbered(1)));
    }
    CHECK(read_file(target) == numbered(1));
    CHECK(mode_of(target) == 0640);
    CHECK(std::filesystem::is_symlink(path));
}

TEST_CASE("a reopen after logrotate's rename makes the file with the mode and refuses a planted link", "[file_sink][mode][symlink]") {
    const TempDir dir;
    const Umask usual(0022);
    const std::string path = dir.file("app.log"), target = dir.file("planted.log");
    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .reopen_check = 0ms, .mode = 0600});
    deliver(sink, view(numbered(1)));
    std::filesystem::rename(path, path + ".1");
    sink.reopen();
    deliver(sink, view(numbered(2)));
    CHECK(mode_of(path) == 0600);
    CHECK(read_file(path) == numbered(2));

    std::filesystem::rename(path, path + ".2");
    std::ofstream(target) << "";
    std::filesystem::create_symlink(target, path);
    {
        const StderrTo quiet;  // the refused open is reported there
        sink.reopen();
        deliver(sink, view(numbered(3)));
    }
    CHECK(read_file(target).empty());
    CHECK(sink.counters().errors == 1);
    CHECK(sink.counters().dropped == 1);
    CHECK(read_file(path + ".2") == numbered(2));
}

TEST_CASE("the TOML keys mode and follow_symlinks are read and checked", "[file_sink][config]") {
    const TempDir dir;
    const std::string head = "[[sinks]]\ntype = \"file\"\npath = \"" + dir.file("app.log") + "\"\n";
    const fieldlog::Config config = fieldlog::Config::parse(head + "mode = \"0600\"\nfollow_symlinks = true\n", "app.toml");
    const auto& file = fieldlog_test::options_of<fieldlog::FileSinkOptions>(config.sinks[0].target);
    CHECK(file.mode == 0600);
    CHECK(file.follow_symlinks);
    CHECK(fieldlog_test::options_of<fieldlog::FileSinkOptions>(fieldlog::Config::parse(head + "mode = \"644\"\n", "app.toml").sinks[0].target).mode ==
          0644);
    const std::string what = "expected an octal mode like \"0640\" (0777 at most, with the owner's write bit 0200), got ";
    for (const auto& [value, shown] : std::vector<std::pair<std::string, std::string>>{
             {"640", "640"}, {"\"0999\"", "\"0999\""}, {"\"0440\"", "\"0440\""}, {"\"04640\"", "\"04640\""}, {"\"64\"", "\"64\""}}) {
        INFO(value);
        try {
            (void)fieldlog::Config::parse(head + "mode = " + value + "\n", "app.toml");
            FAIL("no ConfigError");
        } catch (const fieldlog::ConfigError& e) {
            CHECK(std::string(e.what()) == "app.toml:4: sinks[0].mode: " + what + shown);
        }
    }
}
