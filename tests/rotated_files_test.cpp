// SPDX-License-Identifier: MIT
// The file sink's rotated files: gzip compression on the retention worker (checked with gzip
// itself), a process killed while compressing and what the next start puts back, a full disk
// while compressing, retention by count, age and total bytes with files an earlier run left,
// and files of the user's own beside them, never touched. The exits: rotation_exit_test.cpp.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/deliver.hpp"
#include "support/test_support.hpp"

using fieldlog_test::deliver;
using fieldlog_test::gunzip;
using fieldlog_test::gzip_accepts;
using fieldlog_test::read_file;
using fieldlog_test::StderrTo;
using fieldlog_test::TempDir;
using fieldlog_test::wait_until;
using namespace std::chrono_literals;

extern char** environ;

namespace {

namespace fs = std::filesystem;

/// A JSON line numbered `n`, padded to about `size` bytes, with its '\n'.
std::string numbered(int n, std::size_t size = 60) {
    std::string line = "{\"n\":" + std::to_string(n) + ",\"pad\":\"";
    line.append(size > line.size() + 3 ? size - line.size() - 3 : 0, 'x');
    return line + "\"}\n";
}

fieldlog::RecordView view(const std::string& line) {
    return fieldlog::RecordView{{line.data(), line.size()}, fieldlog::Level::info, fieldlog_test::fixed_clock()};
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

/// Sets the file's access and modification times to `age` ago.
void make_old(const std::string& path, std::chrono::seconds age) {
    const timespec then{std::time(nullptr) - static_cast<std::time_t>(age.count()), 0};
    const timespec times[2] = {then, then};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

/// Files in the directory that are not the sink's own: none of them may ever go.
std::vector<std::string> users_files(const TempDir& dir) {
    const std::vector<std::string> names = {"app.log.old", "app.log.1.bak", "app.log.2.gz.bak", "app.log.x.gz",
                                            "app.log.gz", "other.log.1", "notes.txt"};
    std::vector<std::string> paths;
    for (const std::string& name : names) {
        paths.push_back(dir.file(name));
        write_file(paths.back(), "the user's own " + name + "\n");
        make_old(paths.back(), 365 * 24h);
    }
    return paths;
}

void check_untouched(const std::vector<std::string>& paths) {
    for (const std::string& path : paths) {
        INFO(path);
        CHECK(read_file(path) == "the user's own " + fs::path(path).filename().string() + "\n");
    }
}

}  // namespace

TEST_CASE("a rotated file becomes a .gz that gzip accepts, holding exactly what was written", "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    std::string written;
    {
        fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 2000, .keep = 3,
                                 .compress = fieldlog::FileCompression::gzip});
        for (int n = 0; n < 80; ++n) {  // 80 records of 60 bytes: 4800 bytes, two rotations
            const std::string line = numbered(n);
            deliver(sink, view(line));
            written += line;
        }
        CHECK(wait_until([&] { return fs::exists(path + ".1.gz") && fs::exists(path + ".2.gz"); }));
        CHECK(sink.counters().errors == 0);
    }
    REQUIRE(fs::exists(path + ".1.gz"));
    REQUIRE(fs::exists(path + ".2.gz"));
    CHECK_FALSE(fs::exists(path + ".3.gz"));
    CHECK_FALSE(fs::exists(path + ".gz.tmp"));
    CHECK(gzip_accepts(path + ".1.gz"));
    CHECK(gzip_accepts(path + ".2.gz"));
    const auto older = gunzip(path + ".2.gz"), newer = gunzip(path + ".1.gz");
    REQUIRE(older);
    REQUIRE(newer);
    CHECK(older->size() <= 2000);
    CHECK(newer->size() <= 2000);
    CHECK(*older + *newer + read_file(path) == written);
}

TEST_CASE("a process killed while compressing leaves the file hidden and no torn .gz, and the next start compresses it",
          "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    std::string helper = FIELDLOG_SINK_HELPER, mode = "compressing-logger", target = path;
    char* argv[] = {helper.data(), mode.data(), target.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t child = 0;
    REQUIRE(::posix_spawn(&child, argv[0], &actions, nullptr, argv, environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    const bool compressing = wait_until([&] { return fs::exists(dir.file(".app.log.gz.tmp")); });
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(compressing);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));

    CHECK_FALSE(fs::exists(path + ".1.gz"));  // killed mid-way: no .gz at all, torn or whole
    CHECK_FALSE(fs::exists(path + ".1"));     // hidden while compressed: a reader sees it once
    const std::string plain = read_file(dir.file(".app.log.1.compressing"));
    CHECK(plain.size() <= 16 << 20);
    CHECK(plain.size() > (16 << 20) - 100);
    CHECK(plain.starts_with("{\"n\":0,"));
    CHECK(plain.back() == '\n');
    {
        fieldlog::FileSink restarted({.path = path, .keep = 2, .compress = fieldlog::FileCompression::gzip,
                                      .compression_level = 1});
        CHECK(wait_until([&] { return fs::exists(path + ".1.gz"); }));
        CHECK(restarted.counters().errors == 0);
    }
    CHECK_FALSE(fs::exists(dir.file(".app.log.gz.tmp")));  // removed at start
    CHECK_FALSE(fs::exists(dir.file(".app.log.1.compressing")));
    REQUIRE(fs::exists(path + ".1.gz"));
    CHECK(gzip_accepts(path + ".1.gz"));
    CHECK(gunzip(path + ".1.gz") == plain);
}

TEST_CASE("retention by count shifts the files an earlier run left, plain and compressed alike", "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::vector<std::string> users = users_files(dir);
    write_file(path + ".1", numbered(101));
    write_file(path + ".2.gz", "a compressed file of an earlier run\n");  // the sink never reads it
    write_file(path + ".3", numbered(103));
    write_file(path + ".4", numbered(104));  // beyond keep: not the sink's (a larger keep once, or the user's)
    {
        fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 100, .keep = 3});
        for (int n = 0; n < 3; ++n) deliver(sink, view(numbered(n, 80)));  // two rotations
    }
    CHECK(read_file(path) == numbered(2, 80));
    CHECK(read_file(path + ".1") == numbered(1, 80));
    CHECK(read_file(path + ".2") == numbered(0, 80));
    CHECK(read_file(path + ".3") == numbered(101));
    for (const char* gone : {".1.gz", ".2.gz", ".3.gz"}) CHECK_FALSE(fs::exists(path + gone));
    CHECK(read_file(path + ".4") == numbered(104));
    check_untouched(users);
}

TEST_CASE("retention by age deletes old rotated files at start and when the oldest kept one ages out",
          "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::vector<std::string> users = users_files(dir);
    write_file(path + ".1", numbered(1));
    make_old(path + ".1", 1h);
    write_file(path + ".2", numbered(2));
    make_old(path + ".2", 48h - 1s);  // ages out a second after the start
    write_file(path + ".3.gz", "compressed\n");
    make_old(path + ".3.gz", 49h);
    write_file(path + ".4", numbered(4));
    make_old(path + ".4", 10h);  // younger, but behind an older one: retention cuts from the first too old

    fieldlog::FileSink sink({.path = path, .keep = 5, .max_age = 48h});
    CHECK(wait_until([&] { return !fs::exists(path + ".3.gz") && !fs::exists(path + ".4"); }));
    CHECK(wait_until([&] { return !fs::exists(path + ".2"); }, 5s));  // no rotation: the worker's own wake-up
    CHECK(read_file(path + ".1") == numbered(1));
    CHECK(sink.counters().errors == 0);
    check_untouched(users);
}

TEST_CASE("retention by total bytes keeps the newest files that fit, the live file aside", "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::vector<std::string> users = users_files(dir);
    write_file(path + ".1", numbered(1, 1000));
    write_file(path + ".2.gz", std::string(999, 'z') + "\n");
    write_file(path + ".3", numbered(3, 1000));

    fieldlog::FileSink sink({.path = path, .flush_interval = 0ms, .max_size = 700, .keep = 5, .max_total_bytes = 2500});
    CHECK(wait_until([&] { return !fs::exists(path + ".3"); }));  // 1000 + 1000 + 1000 > 2500
    CHECK(fs::exists(path + ".1"));
    CHECK(fs::exists(path + ".2.gz"));

    deliver(sink, view(numbered(10, 600)));
    deliver(sink, view(numbered(11, 600)));  // rotates: 600 + 1000 + 1000 > 2500, so the old .2.gz (now .3.gz) goes
    CHECK(wait_until([&] { return !fs::exists(path + ".3.gz"); }));
    CHECK(read_file(path + ".1") == numbered(10, 600));
    CHECK(read_file(path + ".2") == numbered(1, 1000));
    CHECK(read_file(path) == numbered(11, 600));
    check_untouched(users);
}

TEST_CASE("a compression that fails is counted and reported, and the plain file stays", "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::string report = dir.file("stderr.txt");
    write_file(path + ".1", numbered(1));
    fs::create_directory(dir.file(".app.log.gz.tmp"));  // the temporary cannot be made: EISDIR
    {
        const StderrTo capture(report);
        fieldlog::FileSink sink({.path = path, .compress = fieldlog::FileCompression::gzip});
        CHECK(wait_until([&] { return sink.counters().errors == 1; }));
    }
    CHECK(read_file(report) == "fieldlog: file sink " + path + ": compress (create): Is a directory\n");
    CHECK(read_file(path + ".1") == numbered(1));
    CHECK_FALSE(fs::exists(path + ".1.gz"));
}

TEST_CASE("a compression level outside 1-9 is refused, in code and through configure()", "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    CHECK_THROWS_WITH(fieldlog::FileSink({.path = path, .compression_level = 0}),
                      "compression_level: 0 is not a zlib level (1 fastest to 9 smallest)");
    CHECK_THROWS_WITH(fieldlog::configure({.sinks = {{.target = fieldlog::FileSinkOptions{.path = path, .compression_level = 10}}}}),
                      "sinks[0]: compression_level: 10 is not a zlib level (1 fastest to 9 smallest)");
}

TEST_CASE("the next start puts back the files a process killed while compressing left hidden, and deletes its temporaries",
          "[file_sink][rotated_files]") {
    const TempDir dir;
    const std::string path = dir.file("app.log");
    const std::vector<std::string> users = users_files(dir);
    write_file(dir.file(".app.log.2.compressing"), numbered(2));  // its compression never finished
    write_file(dir.file(".app.log.3.compressing"), numbered(3));  // its .gz was whole: only the delete was left
    write_file(path + ".3.gz", "the whole .gz\n");
    write_file(dir.file(".app.log.9.compressing"), numbered(9));  // a slot past today's keep
    for (const char* temporary : {".app.log.gz.tmp", ".app.log.rotating", "app.log.gz.tmp", "app.log.rotating"}) {
        write_file(dir.file(temporary), "half\n");
    }
    {
        const fieldlog::FileSink sink({.path = path, .keep = 5});
        CHECK(sink.counters().errors == 0);
    }
    CHECK(read_file(path + ".2") == numbered(2));
    CHECK(read_file(path + ".3.gz") == "the whole .gz\n");
    CHECK_FALSE(fs::exists(path + ".3"));
    CHECK(read_file(path + ".9") == numbered(9));
    for (const auto& entry : fs::directory_iterator(dir.path())) {
        const std::string name = entry.path().filename().string();
        CHECK_FALSE(name.starts_with(".app.log"));
        CHECK_FALSE(name.ends_with(".tmp"));
        CHECK_FALSE(name.ends_with(".rotating"));
    }
    check_untouched(users);
}

TEST_CASE("a full disk while compressing leaves the plain file, no .gz and no temporary, and is counted",
          "[file_sink][rotated_files][root]") {
    if (::geteuid() != 0) FIELDLOG_TEST_SKIP("mounting a 256 KiB tmpfs needs root");
    const TempDir dir;
    const std::string mount_point = dir.file("tiny");
    fs::create_directories(mount_point);
    if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=256k") != 0) {
        FIELDLOG_TEST_SKIP("cannot mount a tmpfs here: " << std::strerror(errno));
    }
    struct Unmount {
        std::string path;
        ~Unmount() { ::umount(path.c_str()); }
    } unmount{mount_point};

    // Noise deflate cannot shrink, over half the disk: its .gz does not fit beside it.
    std::mt19937 random(7);
    std::string noise;
    for (int line = 0; line < 160; ++line) {
        for (int i = 0; i < 1023; ++i) noise += static_cast<char>('!' + random() % 90);
        noise += '\n';
    }
    const std::string path = mount_point + "/app.log";
    write_file(path + ".1", noise);
    const std::string report = dir.file("stderr.txt");
    {
        const StderrTo capture(report);
        fieldlog::FileSink sink({.path = path, .compress = fieldlog::FileCompression::gzip});
        CHECK(wait_until([&] { return sink.counters().errors == 1; }));
    }
    CHECK(read_file(report) == "fieldlog: file sink " + path + ": compress (write): No space left on device\n");
    CHECK(read_file(path + ".1") == noise);
    for (const auto& entry : fs::directory_iterator(mount_point)) {
        const std::string name = entry.path().filename().string();
        INFO(name);
        CHECK((name == "app.log" || name == "app.log.1"));
    }
}
