// SPDX-License-Identifier: MIT
// The journald sink against the real systemd-journald: records logged through fieldlog are
// read back with `journalctl --directory=<journal dir> -o json --all` and every field of every
// entry is compared: a plain record and the levels, every kind of value, keys that need
// mapping, a newline (the binary-safe form), invalid UTF-8, a 1 MiB field (the memfd path),
// scope and with() fields, repeated keys, redaction, the time, duration, caller and tid options,
// journald stopped mid-stream and started again, a 200,000-record burst from four threads
// (sync and async: each record there once), journald stopped with SIGSTOP (one bounded wait,
// then drops; async: the writer waits, the caller does not), and a crash's fatal record.
// Without journald: a socket nobody listens on, a receiver whose queue is full (waiting and
// when_full = drop, the crash path's wait), and configuration errors.
//
// How journald runs here, as a plain child process (no systemd as PID 1):
//   unshare --mount --propagation private /bin/sh sinks/journald_start.sh <root>
// where the script mounts a tmpfs over /run (in that mount namespace only), bind-mounts
// <root>/runtime onto /run/systemd/journal (its sockets: socket, stdout, dev-log, varlink) and
// <root>/logs onto /run/log/journal (the volatile journal), writes a drop-in
// /run/systemd/journald.conf.d/test.conf (Storage=volatile, ReadKMsg=no, no forwarding, no rate
// limit) and then execs /lib/systemd/systemd-journald, so the child's pid is journald's. The
// socket journald binds is a file in <root>/runtime, which this process reaches by its path
// from outside the namespace. Journald 252 has no environment variable or option that moves its
// sockets or storage; `systemd-journald <namespace>` would still create
// /run/systemd/journal.<namespace> and /var/log/journal/<machine-id>.<namespace> on the host and
// exits when idle, so it is not used. The mount namespace needs CAP_SYS_ADMIN: without root (or
// without unshare, journald or journalctl) those test cases are skipped.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/platform.hpp"
#include "base/thread_id.hpp"
#include "support/test_support.hpp"

using fieldlog::Level;
using fieldlog_test::read_file;
using fieldlog_test::StderrTo;
using fieldlog_test::TempDir;
using fieldlog_test::wait_until;
using namespace std::chrono_literals;

namespace {

constexpr const char* kJournald = "/lib/systemd/systemd-journald";
constexpr const char* kJournalctl = "/usr/bin/journalctl";
constexpr const char* kUnshare = "/usr/bin/unshare";
constexpr std::string_view kTimestamp = "2026-11-30T08:38:11.123456789Z";  // fixed_clock()

/// One journal entry as `journalctl -o json` shows it: each field's values (a field given
/// twice has two), as raw bytes (journalctl writes unprintable values as arrays of bytes).
using Entry = std::map<std::string, std::vector<std::string>>;

/// Reads the objects `journalctl -o json` writes, one per line.
class JournalJsonReader {
public:
    explicit JournalJsonReader(std::string_view text) : text_(text) {}

    std::vector<Entry> entries() {
        std::vector<Entry> out;
        for (skip_space(); at_ < text_.size(); skip_space()) out.push_back(object());
        return out;
    }

private:
    [[noreturn]] void fail(const char* what) const {
        throw std::runtime_error(std::string("journalctl output: ") + what + " at byte " + std::to_string(at_));
    }
    void skip_space() {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) ++at_;
    }
    void expect(char c) {
        skip_space();
        if (at_ >= text_.size() || text_[at_] != c) fail("unexpected character");
        ++at_;
    }
    bool next_is(char c) {
        skip_space();
        return at_ < text_.size() && text_[at_] == c;
    }

    Entry object() {
        Entry entry;
        expect('{');
        while (!next_is('}')) {
            std::string name = string();
            expect(':');
            entry[name] = values();
            if (next_is(',')) ++at_;
        }
        expect('}');
        return entry;
    }

    /// A field's value: a string, an array of bytes, null (too large: never with --all), or,
    /// for a repeated field, an array of those.
    std::vector<std::string> values() {
        if (next_is('"')) return {string()};
        if (!next_is('[')) fail("a value neither string nor array (null: a field journalctl left out)");
        const std::size_t open = at_++;
        if (!next_is('"') && !next_is('[')) {  // an array of bytes: one value
            at_ = open;
            return {bytes()};
        }
        std::vector<std::string> out;
        while (!next_is(']')) {
            out.push_back(next_is('"') ? string() : bytes());
            if (next_is(',')) ++at_;
        }
        expect(']');
        return out;
    }

    std::string bytes() {
        std::string out;
        expect('[');
        while (!next_is(']')) {
            std::size_t used = 0;
            const int byte = std::stoi(std::string(text_.substr(at_, 4)), &used);
            out += static_cast<char>(byte);
            at_ += used;
            if (next_is(',')) ++at_;
        }
        expect(']');
        return out;
    }

    std::string string() {
        expect('"');
        std::string out;
        while (at_ < text_.size() && text_[at_] != '"') {
            const char c = text_[at_++];
            if (c != '\\') {
                out += c;
                continue;
            }
            if (at_ >= text_.size()) fail("a lone backslash");
            const char kind = text_[at_++];
            switch (kind) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    const unsigned long code = std::stoul(std::string(text_.substr(at_, 4)), nullptr, 16);
                    at_ += 4;
                    if (code >= 0x80) fail("a \\u escape above ASCII (journalctl writes UTF-8 as it is)");
                    out += static_cast<char>(code);
                    break;
                }
                default: out += kind;
            }
        }
        expect('"');
        return out;
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

/// Runs `argv` and returns its exit status; its standard output goes to `output`.
int run(const std::vector<std::string>& argv, const std::string& output = "/dev/null") {
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return -1;
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Why journald cannot run here ("" when it can).
std::string missing_peer() {
    for (const char* tool : {kJournald, kJournalctl, kUnshare}) {
        if (::access(tool, X_OK) != 0) return std::string(tool) + " is not installed";
    }
    if (::geteuid() != 0) return "journald's private mount namespace needs root";
    if (run({kUnshare, "--mount", "--propagation", "private", "/bin/true"}) != 0) {
        return "unshare --mount fails here (no CAP_SYS_ADMIN?)";
    }
    return "";
}

/// A datagram reaches `path` (something is bound there, not a stale socket file).
bool datagram_socket_listens(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    return connected;
}

/// Sends `path` one native-protocol entry that entries() leaves out (FIELDLOG_TEST_PROBE=`tag`),
/// from a blocking socket: it waits for room in journald's queue.
void send_probe(const std::string& path, int tag) {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    const std::string probe = "MESSAGE=probe\nFIELDLOG_TEST_PROBE=" + std::to_string(tag) + "\n";
    (void)::sendto(fd, probe.data(), probe.size(), 0, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::close(fd);
}

/// systemd-journald as a child process, in a mount namespace of its own (see the top comment),
/// with its socket and journal under `root`.
class Journald {
public:
    /// `max_use`: how much journal journald keeps before it deletes the oldest entries
    /// (journald_start.sh's default when empty).
    explicit Journald(const std::filesystem::path& root, std::string max_use = "") : root_(root), max_use_(std::move(max_use)) {
        std::filesystem::create_directories(root_ / "runtime");
        std::filesystem::create_directories(root_ / "logs");
    }
    ~Journald() { stop(); }
    Journald(const Journald&) = delete;
    Journald& operator=(const Journald&) = delete;

    [[nodiscard]] std::string socket() const { return (root_ / "runtime" / "socket").string(); }
    /// What journald wrote to stdout and stderr, for failure messages.
    [[nodiscard]] std::string output() const { return read_file((root_ / "journald.out").string()); }

    /// Starts journald; true once its socket takes datagrams.
    bool start() {
        const std::string root = root_.string();
        const std::string out = (root_ / "journald.out").string();
        const char* argv[] = {kUnshare, "--mount", "--propagation", "private", "/bin/sh", FIELDLOG_JOURNALD_START,
                              root.c_str(), max_use_.empty() ? nullptr : max_use_.c_str(), nullptr};
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
        const int spawned = ::posix_spawn(&pid_, kUnshare, &actions, nullptr, const_cast<char**>(argv), environ);
        posix_spawn_file_actions_destroy(&actions);
        if (spawned != 0) {
            pid_ = -1;
            return false;
        }
        // Ready once an entry of ours arrives with our _PID: journald binds its socket before it
        // asks for the senders' credentials (SO_PASSCRED), and an entry sent in between has no
        // _PID, so entries() would never find it. A probe of its own: after a restart, those of
        // the journald before are in the journal already.
        const std::string probe = "FIELDLOG_TEST_PROBE=" + std::to_string(++probes_);
        return wait_until([&] {
            if (!datagram_socket_listens(socket())) return false;
            send_probe(socket(), probes_);
            return !journal_json({probe}).empty();
        });
    }

    /// Stops journald's process where it is (SIGSTOP): it reads nothing until resume().
    void pause() const { ::kill(pid_, SIGSTOP); }
    void resume() const { ::kill(pid_, SIGCONT); }

    /// Waits until journald has written every entry sent to it before this call (or 10 s
    /// passed): datagrams queue in the order sent, and journald writes each before it reads the next.
    [[nodiscard]] bool read_everything() {
        const int tag = ++probes_;
        send_probe(socket(), tag);
        return wait_until([&] { return !journal_json({"FIELDLOG_TEST_PROBE=" + std::to_string(tag)}).empty(); });
    }

    /// Stops journald (SIGTERM: it writes what it received and exits); its socket file stays.
    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

    /// Every entry process `pid` sent, in journal order (the probes left out).
    [[nodiscard]] std::vector<Entry> entries(pid_t pid = ::getpid()) const {
        std::vector<Entry> sent = JournalJsonReader(journal_json({}, pid)).entries();
        std::erase_if(sent, [](const Entry& entry) { return entry.contains("FIELDLOG_TEST_PROBE"); });
        return sent;
    }

    /// The entries of this process with SYSLOG_IDENTIFIER `identifier`, with only the fields
    /// `fields` (and the four journalctl always shows): a burst's many entries, read fast.
    [[nodiscard]] std::vector<Entry> entries_with(const std::string& identifier, const std::string& fields) const {
        return JournalJsonReader(journal_json({"SYSLOG_IDENTIFIER=" + identifier}, ::getpid(), fields)).entries();
    }

    /// Waits until `count` entries of this process are in the journal (or 10 s passed).
    [[nodiscard]] std::vector<Entry> wait_for(std::size_t count) const {
        std::vector<Entry> found;
        wait_until([&] {
            found = entries();
            return found.size() >= count;
        });
        return found;
    }

private:
    /// What `journalctl -o json` shows of process `pid`'s entries that also match `matches`
    /// (only `fields` of them when given; "" when it fails).
    [[nodiscard]] std::string journal_json(const std::vector<std::string>& matches, pid_t pid = ::getpid(),
                                           const std::string& fields = "") const {
        const std::string json = (root_ / "journalctl.json").string();
        std::vector<std::string> argv{kJournalctl, "--directory=" + (root_ / "logs").string(), "-o", "json", "--all",
                                      "--no-pager", "_PID=" + std::to_string(pid)};
        if (!fields.empty()) argv.push_back("--output-fields=" + fields);
        argv.insert(argv.end(), matches.begin(), matches.end());
        return run(argv, json) == 0 ? read_file(json) : std::string();
    }

    std::filesystem::path root_;
    std::string max_use_;
    pid_t pid_ = -1;
    int probes_ = 0;  // the FIELDLOG_TEST_PROBE value of the last probe
};

/// Starts `journald`; on failure the test ends, showing what journald wrote.
void require_started(Journald& journald) {
    const bool started = journald.start();
    INFO(journald.output());
    REQUIRE(started);
}

/// Configures fieldlog with `sink` (json is forced on it even though the default is logfmt)
/// at level trace with the fixed clock while alive; fieldlog_test::no_output() afterwards.
class LoggingTo {
public:
    explicit LoggingTo(fieldlog::SinkTarget sink) {
        fieldlog::configure({.level = Level::trace,
                             .format = fieldlog::Format::logfmt,
                             .sinks = {{.target = std::move(sink)}},
                             .clock = &fieldlog_test::fixed_clock});
    }
    ~LoggingTo() { fieldlog_test::release_sinks(); }
    LoggingTo(const LoggingTo&) = delete;
    LoggingTo& operator=(const LoggingTo&) = delete;
};

/// The fields of `entry` a client sends: without journald's trusted `_…` and `__…` ones.
Entry sent_fields(const Entry& entry) {
    Entry out;
    for (const auto& [name, values] : entry) {
        if (!name.starts_with('_')) out[name] = values;
    }
    return out;
}

/// The fields every record of logger `logger` at `priority` carries, plus `extra`.
Entry record_fields(std::string_view message, std::string_view identifier, Entry extra, std::string priority = "6",
                    std::string logger = "svc") {
    extra["MESSAGE"] = {std::string(message)};
    extra["PRIORITY"] = {std::move(priority)};
    if (!identifier.empty()) extra["SYSLOG_IDENTIFIER"] = {std::string(identifier)};
    extra["FIELDLOG_LOGGER"] = {std::move(logger)};
    extra["FIELDLOG_TS"] = {std::string(kTimestamp)};
    return extra;
}

/// The `fatal` record of a SIGSEGV as the crash path hands it to a sink that reads parts.
class FatalRecord {
public:
    FatalRecord() : message_("fatal signal SIGSEGV") {}
    [[nodiscard]] fieldlog::RecordView view() const {
        return {.bytes = {},
                .level = Level::fatal,
                .time = fieldlog_test::fixed_clock(),
                .logger = "fieldlog",
                .message = &message_,
                .bound = {},
                .scope = {},
                .fields = fields_,
                .options = &options_,
                .thread_id = 1};
    }

private:
    fieldlog::Field fields_[2] = {{"signal", "SIGSEGV"}, {"signo", 11}};
    fieldlog::Message message_;
    fieldlog::EncoderOptions options_{};
};

/// How long calls took: the longest one and all of them together.
struct CallTimes {
    std::chrono::steady_clock::duration longest{};
    std::chrono::steady_clock::duration whole{};

    template <typename Call>
    void time(Call&& call) {
        const auto start = std::chrono::steady_clock::now();
        call();
        const auto took = std::chrono::steady_clock::now() - start;
        longest = std::max(longest, took);
        whole += took;
    }
};

/// Fills the queue of the datagram socket at `path` from a socket of its own, until the kernel
/// takes no more, with entries that Journald::entries() leaves out (FIELDLOG_TEST_PROBE=0):
/// whatever net.unix.max_dgram_qlen is, the next datagram finds no room.
void fill_queue(const std::string& path) {
    const int sender = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    constexpr std::string_view filler = "MESSAGE=filler\nFIELDLOG_TEST_PROBE=0\n";
    while (::sendto(sender, filler.data(), filler.size(), 0, reinterpret_cast<const sockaddr*>(&address),
                    sizeof address) >= 0) {
    }
    ::close(sender);
}

/// A datagram socket bound at a path that reads only when asked: a journald whose queue fills.
class SilentReceiver {
public:
    explicit SilentReceiver(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
        if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
            throw std::runtime_error("cannot bind " + path);
        }
    }
    ~SilentReceiver() { ::close(fd_); }
    SilentReceiver(const SilentReceiver&) = delete;
    SilentReceiver& operator=(const SilentReceiver&) = delete;

    /// Reads every datagram waiting; how many there were.
    [[nodiscard]] std::uint64_t drain() const {
        std::uint64_t count = 0;
        char datagram[65536];
        while (::recv(fd_, datagram, sizeof datagram, MSG_DONTWAIT) >= 0) ++count;
        return count;
    }
    /// The next datagram waiting ("" when none is).
    [[nodiscard]] std::string next() const {
        std::string datagram(65536, '\0');
        const ssize_t size = ::recv(fd_, datagram.data(), datagram.size(), MSG_DONTWAIT);
        datagram.resize(size > 0 ? static_cast<std::size_t>(size) : 0);
        return datagram;
    }

private:
    int fd_;
};

constexpr int kBurstThreads = 4;
constexpr int kBurstPerThread = 50'000;
constexpr const char* kBurstJournal = "1G";  // the whole burst stays in the journal

/// A burst of kBurstThreads × kBurstPerThread records (fields T and SEQ) logged at once from
/// as many threads to a journald sink in its default mode: every one must be in the journal
/// exactly once, and the sink must have dropped none.
void check_burst(Journald& journald, bool async, const std::string& identifier) {
    constexpr std::size_t kTotal = std::size_t{kBurstThreads} * kBurstPerThread;
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = identifier});
    fieldlog::configure({.level = Level::info,
                         .async = {.enabled = async},
                         .sinks = {{.target = std::shared_ptr<fieldlog::Sink>(sink)}},
                         .clock = &fieldlog_test::fixed_clock});
    std::vector<std::thread> threads;
    for (int t = 0; t < kBurstThreads; ++t) {
        threads.emplace_back([t] {
            const auto log = fieldlog::get("burst");
            for (int seq = 0; seq < kBurstPerThread; ++seq) log.info("burst", {{"t", t}, {"seq", seq}});
        });
    }
    for (std::thread& thread : threads) thread.join();
    fieldlog::flush();
    const fieldlog::SinkCounters counters = sink->counters();
    fieldlog_test::release_sinks();
    CHECK(counters.records == kTotal);
    CHECK(counters.dropped == 0);

    REQUIRE(journald.read_everything());
    const std::vector<Entry> entries = journald.entries_with(identifier, "T,SEQ");
    std::vector<int> seen(kTotal, 0);
    std::size_t strays = 0;
    const auto number = [](const Entry& entry, const char* name) {
        int value = -1;
        if (const auto found = entry.find(name); found != entry.end() && found->second.size() == 1) {
            const std::string& text = found->second[0];
            std::from_chars(text.data(), text.data() + text.size(), value);
        }
        return value;
    };
    for (const Entry& entry : entries) {
        const int t = number(entry, "T");
        const int seq = number(entry, "SEQ");
        if (t < 0 || t >= kBurstThreads || seq < 0 || seq >= kBurstPerThread) {
            ++strays;
            continue;
        }
        ++seen[static_cast<std::size_t>(t) * kBurstPerThread + static_cast<std::size_t>(seq)];
    }
    CHECK(entries.size() == kTotal);
    CHECK(strays == 0);
    CHECK(std::count(seen.begin(), seen.end(), 0) == 0);  // none missing
    CHECK(std::count_if(seen.begin(), seen.end(), [](int n) { return n > 1; }) == 0);  // none twice
}

/// Starts `journald` (further arguments: Journald's after the root), or skips the test.
#define FIELDLOG_JOURNALD_OR_SKIP(journald, ...)                                                      \
    if (const std::string missing = missing_peer(); !missing.empty()) FIELDLOG_TEST_SKIP(missing);   \
    const TempDir journald_dir;                                                                      \
    Journald journald(journald_dir.path() __VA_OPT__(, ) __VA_ARGS__);                               \
    require_started(journald)

}  // namespace

TEST_CASE("a record becomes a journal entry: message, priority, logger, time, identifier", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket()});
        const auto log = fieldlog::get("svc");
        log.info("request done", {{"status", 200}});
        log.trace("t");
        log.debug("d");
        log.warn("w");
        log.error("e");
        log.fatal("f");
    }
    const std::vector<Entry> entries = journald.wait_for(6);
    REQUIRE(entries.size() == 6);
    // Config::format is logfmt: the journald sink still got JSON (or STATUS would be missing).
    // The default SYSLOG_IDENTIFIER: the program's name, none in the portable core on glibc.
    const std::string identifier = FIELDLOG_LINUX_FACILITIES ? program_invocation_short_name : "";
    CHECK(sent_fields(entries[0]) == record_fields("request done", identifier, {{"STATUS", {"200"}}}));
    CHECK(entries[0].at("_TRANSPORT") == std::vector<std::string>{"journal"});
    CHECK(entries[0].at("_PID") == std::vector<std::string>{std::to_string(::getpid())});
    const char* const messages[] = {"t", "d", "w", "e", "f"};
    const char* const priorities[] = {"7", "7", "4", "3", "2"};
    for (std::size_t i = 0; i < 5; ++i) {
        CHECK(sent_fields(entries[i + 1]) == record_fields(messages[i], identifier, {}, priorities[i]));
    }
}

TEST_CASE("every kind of value arrives as its text: strings raw, the rest as JSON", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    const std::byte raw[] = {std::byte{'h'}, std::byte{'i'}, std::byte{0xFF}};
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "kinds"});
        fieldlog::get("svc").info(
            "kinds", {{"int", -42},
                      {"uint", std::numeric_limits<std::uint64_t>::max()},
                      {"double", 1.5},
                      {"nan", std::numeric_limits<double>::quiet_NaN()},
                      {"yes", true},
                      {"no", false},
                      {"nothing", nullptr},
                      {"text", "plain text"},
                      {"escaped", "say \"hi\" \\ tab\there"},
                      {"control", "bell\x07"},
                      {"unicode", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
                      {"empty", ""},
                      {"latency", 1250us},
                      {"blob", fieldlog::Bytes{raw}},
                      {"user", fieldlog::Object{{"id", 7}, {"name", "a \"b\""}}},
                      {"list", fieldlog::Array{1, "two", nullptr, fieldlog::Array{}}},
                      {"maybe", std::optional<std::string>("bad \xFF\nline")},
                      {"never", std::optional<int>()},
                      {"ids", std::vector<int>{3, 4}},
                      {"counts", std::map<std::string, int>{{"a", 1}}}});
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) ==
          record_fields("kinds", "kinds",
                        {{"INT", {"-42"}},
                         {"UINT", {"18446744073709551615"}},
                         {"DOUBLE", {"1.5"}},
                         {"NAN", {"NaN"}},
                         {"YES", {"true"}},
                         {"NO", {"false"}},
                         {"NOTHING", {"null"}},
                         {"TEXT", {"plain text"}},
                         {"ESCAPED", {"say \"hi\" \\ tab\there"}},
                         {"CONTROL", {"bell\x07"}},
                         {"UNICODE", {"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"}},
                         {"EMPTY", {""}},
                         {"LATENCY", {"1.25ms"}},
                         {"BLOB", {"aGn/"}},
                         {"USER", {R"({"id":7,"name":"a \"b\""})"}},
                         {"LIST", {R"([1,"two",null,[]])"}},
                         {"MAYBE", {"bad \xEF\xBF\xBD\nline"}},
                         {"NEVER", {"null"}},
                         {"IDS", {"[3,4]"}},
                         {"COUNTS", {R"({"a":1})"}}}));
}

TEST_CASE("keys become journal field names: upper case, _ for the rest, F_ before a digit or _", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    const std::string long_key(70, 'k');
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "keys"});
        fieldlog::get("svc").info("keys", {{"user-id", "a"},
                                           {"user_id", "b"},  // the same field name: both values kept
                                           {"2fa", true},
                                           {"_x", 1},
                                           {"Mixed.Case", 2},
                                           {"", 3},
                                           {"\xC3\xA9t\xC3\xA9", 4},
                                           {"a\"b", 5},
                                           {long_key, 6},
                                           {"msg", "a user's own msg"}});  // written as fields.msg
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) == record_fields("keys", "keys",
                                                   {{"USER_ID", {"a", "b"}},
                                                    {"F_2FA", {"true"}},
                                                    {"F__X", {"1"}},
                                                    {"MIXED_CASE", {"2"}},
                                                    {"F_", {"3"}},
                                                    {"F___T__", {"4"}},
                                                    {"A_B", {"5"}},
                                                    {std::string(64, 'K'), {"6"}},
                                                    {"FIELDS_MSG", {"a user's own msg"}}}));
}

TEST_CASE("a value with a newline goes in the binary-safe form and arrives whole", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "newline"});
        fieldlog::get("svc").info("two\nlines", {{"stack", "at f()\nat g()\n"}, {"after", "x"}});
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) ==
          record_fields("two\nlines", "newline", {{"STACK", {"at f()\nat g()\n"}}, {"AFTER", {"x"}}}));
}

TEST_CASE("invalid UTF-8 arrives as the encoder repaired it: U+FFFD per bad sequence", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "utf8"});
        fieldlog::get("svc").info("bad \xFF byte", {{"bad", "a\xFF\xFE b\xE2\x82 c\xC3"}});
    }
    const std::string replacement = "\xEF\xBF\xBD";
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) ==
          record_fields("bad " + replacement + " byte", "utf8",
                        {{"BAD", {"a" + replacement + replacement + " b" + replacement + " c" + replacement}}}));
}

TEST_CASE("a 1 MiB field goes as a sealed memfd and arrives byte for byte", "[journald]") {
    // qemu-user 7.2 returns success from a sendmsg() without data and sends nothing: the memfd's
    // datagram is one (journald takes a file descriptor only from a datagram without data).
    FIELDLOG_SKIP_UNDER_EMULATION("a datagram without data, as a memfd goes to journald, is not sent");
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    std::string big;
    for (std::size_t i = 0; big.size() < 1024 * 1024; ++i) big += "chunk " + std::to_string(i) + ";";
    big.resize(1024 * 1024);
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "big"});
    {
        const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};  // made in code: info() forces json
        const auto log = fieldlog::get("svc");
        log.info("small before");
        log.info("big", {{"big", big}, {"tail", "after the big one"}});
        log.info("small after");
    }
    CHECK(sink->memfd_entries() == 1);
    CHECK(sink->counters().dropped == 0);
    const std::vector<Entry> entries = journald.wait_for(3);
    REQUIRE(entries.size() == 3);
    CHECK(sent_fields(entries[0]) == record_fields("small before", "big", {}));
    const Entry fields = sent_fields(entries[1]);
    REQUIRE(fields.contains("BIG"));
    REQUIRE(fields.at("BIG").size() == 1);
    CHECK(fields.at("BIG")[0].size() == big.size());
    CHECK(fields.at("BIG")[0] == big);  // one CHECK, not a 1 MiB diff per byte
    CHECK(fields == record_fields("big", "big", {{"BIG", {big}}, {"TAIL", {"after the big one"}}}));
    CHECK(sent_fields(entries[2]) == record_fields("small after", "big", {}));
}

TEST_CASE("scope and with() fields are fields of the entry", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "context"});
        const auto log = fieldlog::get("svc").with({{"service", "checkout"}});
        const fieldlog::Scope scope{{"request_id", "r-17"}, {"attempt", 2}};
        log.info("in scope", {{"status", 200}});
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) ==
          record_fields("in scope", "context",
                        {{"SERVICE", {"checkout"}}, {"REQUEST_ID", {"r-17"}}, {"ATTEMPT", {"2"}}, {"STATUS", {"200"}}}));
}

TEST_CASE("with caller and tid on, the caller is CODE_FILE, CODE_LINE and CODE_FUNC, the thread TID", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    int line = 0;
    {
        fieldlog::configure({.level = Level::trace,
                             .caller = fieldlog::Caller::with_function,
                             .tid = true,
                             .sinks = {{.target = fieldlog::JournaldSinkOptions{.socket = journald.socket(),
                                                                                 .identifier = "site"}}},
                             .clock = &fieldlog_test::fixed_clock});
        fieldlog::get("svc").info("located");
        line = __LINE__ - 1;
        fieldlog_test::release_sinks();
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    const Entry sent = sent_fields(entries[0]);
    CHECK(sent.at("CODE_FILE") == std::vector<std::string>{"tests/journald_sink_test.cpp"});
    CHECK(sent.at("CODE_LINE") == std::vector<std::string>{std::to_string(line)});
    REQUIRE(sent.count("CODE_FUNC") == 1);
    CHECK(sent.at("CODE_FUNC")[0].find("C_A_T_C_H") != std::string::npos);  // Catch2's name for this test's function
    CHECK(sent.at("TID") == std::vector<std::string>{std::to_string(fieldlog::detail::kernel_thread_id())});
    CHECK(sent.count("CALLER") == 0);
}

TEST_CASE("a key given again: the last value counts, where it was given last", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        const LoggingTo logging(fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "repeat"});
        const auto log = fieldlog::get("svc").with({{"region", "eu"}, {"attempt", 1}});
        const fieldlog::Scope scope{{"attempt", 2}};
        log.info("again", {{"attempt", 3}, {"fields.msg", "first"}, {"msg", "second"}, {"region", "us"}});
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) ==
          record_fields("again", "repeat", {{"ATTEMPT", {"3"}}, {"FIELDS_MSG", {"second"}}, {"REGION", {"us"}}}));
}

TEST_CASE("a redacted key's value never reaches the journal, at any depth", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        fieldlog::configure({.level = Level::trace,
                             .redact = {"password", "*token"},
                             .sinks = {{.target = fieldlog::JournaldSinkOptions{.socket = journald.socket(),
                                                                                 .identifier = "redact"}}},
                             .clock = &fieldlog_test::fixed_clock});
        const auto log = fieldlog::get("svc").with({{"api_token", "t-secret"}});
        log.info("login", {{"user", "ann"},
                           {"password", "p-secret"},
                           {"auth", fieldlog::Object{{"Password", "n-secret"}, {"kind", "basic"}}}});
        fieldlog_test::release_sinks();
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) == record_fields("login", "redact",
                                                   {{"API_TOKEN", {"[REDACTED]"}},
                                                    {"USER", {"ann"}},
                                                    {"PASSWORD", {"[REDACTED]"}},
                                                    {"AUTH", {R"({"Password":"[REDACTED]","kind":"basic"})"}}}));
    for (const auto& [name, values] : entries[0]) {
        for (const std::string& value : values) CHECK(value.find("secret") == std::string::npos);
    }
}

TEST_CASE("the configuration's time, duration, value cap and caller options shape the entry", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    {
        fieldlog::configure({.level = Level::trace,
                             .timestamp = {.precision = fieldlog::TimestampPrecision::milli},
                             .duration = fieldlog::DurationFormat::nanos,
                             .max_value_bytes = 8,
                             .sinks = {{.target = fieldlog::JournaldSinkOptions{.socket = journald.socket(),
                                                                                 .identifier = "options"},
                                        .caller = fieldlog::Caller::on}},
                             .clock = &fieldlog_test::fixed_clock});
        fieldlog::get("svc").info("shaped", {{"took", 1250us},
                                             {"at", fieldlog_test::fixed_clock()},
                                             {"long", "abcdefghijkl"},
                                             {"nested", fieldlog::Object{{"long", "abcdefghijkl"}}}});
        fieldlog_test::release_sinks();
    }
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    const Entry sent = sent_fields(entries[0]);
    CHECK(sent.at("FIELDLOG_TS") == std::vector<std::string>{"2026-11-30T08:38:11.123Z"});
    CHECK(sent.at("AT") == std::vector<std::string>{"2026-11-30T08:38:11.123Z"});
    CHECK(sent.at("TOOK") == std::vector<std::string>{"1250000"});
    CHECK(sent.at("LONG") == std::vector<std::string>{"abcdefgh\xE2\x80\xA6[truncated 4 bytes]"});
    CHECK(sent.at("NESTED") == std::vector<std::string>{"{\"long\":\"abcdefgh\xE2\x80\xA6[truncated 4 bytes]\"}"});
    CHECK(sent.at("CODE_FILE") == std::vector<std::string>{"tests/journald_sink_test.cpp"});
    CHECK(sent.count("CODE_FUNC") == 0);
    CHECK(sent.count("TID") == 0);
}

TEST_CASE("the crash path's fatal record reaches the journal as one entry", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    fieldlog::JournaldSink sink({.socket = journald.socket(), .identifier = "crash"});
    const FatalRecord fatal;
    const fieldlog::RecordView view = fatal.view();
    sink.write_on_crash({&view, 1});
    const std::vector<Entry> entries = journald.wait_for(1);
    REQUIRE(entries.size() == 1);
    CHECK(sent_fields(entries[0]) == record_fields("fatal signal SIGSEGV", "crash",
                                                   {{"SIGNAL", {"SIGSEGV"}}, {"SIGNO", {"11"}}}, "2", "fieldlog"));
}

TEST_CASE("journald stopped mid-stream: records meanwhile are dropped at once, later ones arrive", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    const TempDir dir;
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "restart"});
    const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};
    const auto log = fieldlog::get("svc");
    for (int i = 0; i < 3; ++i) log.info("before", {{"i", i}});
    REQUIRE(journald.wait_for(3).size() == 3);

    journald.stop();
    REQUIRE_FALSE(datagram_socket_listens(journald.socket()));  // the stale socket file refuses
    auto slowest = std::chrono::steady_clock::duration::zero();
    {
        const StderrTo stderr_file(dir.file("stderr.txt"));
        for (int i = 0; i < 5; ++i) {
            const auto start = std::chrono::steady_clock::now();
            log.info("while down", {{"i", i}});
            slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
        }
    }
    CHECK(slowest < 1s);  // a send that blocked would wait for a journald that is not coming
    CHECK(sink->counters().dropped == 5);
    CHECK(sink->counters().errors == 5);
    CHECK(read_file(dir.file("stderr.txt"))
              .starts_with("fieldlog: journald sink " + journald.socket() + ": send: Connection refused"));

    require_started(journald);
    for (int i = 0; i < 3; ++i) log.info("after", {{"i", i}});
    const std::vector<Entry> entries = journald.wait_for(6);
    REQUIRE(entries.size() == 6);
    for (int i = 0; i < 6; ++i) {
        CHECK(sent_fields(entries[static_cast<std::size_t>(i)]) ==
              record_fields(i < 3 ? "before" : "after", "restart", {{"I", {std::to_string(i % 3)}}}));
    }
    CHECK(sink->counters().records == 11);
    CHECK(sink->counters().dropped == 5);
}

TEST_CASE("journald restarted between two records: the next record reaches the new one", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "restart"});
    const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};
    const auto log = fieldlog::get("svc");
    log.info("to the first journald");
    REQUIRE(journald.read_everything());
    journald.stop();
    require_started(journald);  // a new socket at the path: the sink's connection is to the old one
    log.info("to the second journald");
    REQUIRE(journald.read_everything());
    CHECK(sink->counters().dropped == 0);
    const std::vector<Entry> entries = journald.entries();
    REQUIRE(entries.size() == 2);
    CHECK(sent_fields(entries[1]) == record_fields("to the second journald", "restart", {}));
}

TEST_CASE("no journald at the path: each record is dropped, counted and reported", "[journald]") {
    const TempDir dir;
    auto sink = std::make_shared<fieldlog::JournaldSink>(fieldlog::JournaldSinkOptions{.socket = dir.file("nobody")});
    {
        const StderrTo stderr_file(dir.file("stderr.txt"));
        const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};
        for (int i = 0; i < 3; ++i) fieldlog::get("svc").info("lost", {{"i", i}});
    }
    CHECK(sink->counters().records == 3);
    CHECK(sink->counters().dropped == 3);
    CHECK(sink->counters().errors == 3);
    CHECK(read_file(dir.file("stderr.txt")) ==
          "fieldlog: journald sink " + dir.file("nobody") + ": send: No such file or directory\n");
}

TEST_CASE("a receiver that never reads: one record waits wait_timeout, the next ones drop until one is taken",
          "[journald]") {
    const TempDir dir;
    const std::string path = dir.file("full.sock");
    const SilentReceiver receiver(path);
    constexpr auto kBound = 300ms;
    constexpr int kRecords = 20;
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = path, .wait_timeout = kBound});
    const StderrTo stderr_file(dir.file("stderr.txt"));
    const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};
    const auto log = fieldlog::get("svc");
    const auto burst = [&] {
        CallTimes times;
        for (int i = 0; i < kRecords; ++i) times.time([&] { log.info("queued", {{"i", i}}); });
        return times;
    };

    fill_queue(path);
    const CallTimes first = burst();
    CHECK(first.longest >= kBound);       // one record waited for room...
    CHECK(first.longest <= kBound + 2s);  // ...no longer than the bound...
    CHECK(first.whole < 10 * kBound);     // ...and the rest did not wait: each would take the bound
    CHECK(sink->counters().dropped == kRecords);

    // The receiver reads: the next record is taken, and a full queue is waited for again.
    CHECK(receiver.drain() > 0);
    log.info("taken");
    CHECK(receiver.next().find("\nMESSAGE=taken\n") != std::string::npos);
    fill_queue(path);
    const CallTimes second = burst();
    CHECK(second.longest >= kBound);
    CHECK(second.whole < 10 * kBound);
    CHECK(sink->counters().dropped == 2 * kRecords);
    CHECK(sink->counters().errors == 2 * kRecords);
    CHECK(read_file(dir.file("stderr.txt"))
              .starts_with("fieldlog: journald sink " + path +
                           ": send: no room for 300 ms (journald stopped or wedged); records are dropped without "
                           "waiting until it takes one"));
}

TEST_CASE("when_full = drop: a receiver that never reads never blocks a call, what does not fit is dropped",
          "[journald]") {
    const TempDir dir;
    const std::string path = dir.file("full.sock");
    const SilentReceiver receiver(path);
    constexpr int kRecords = 3000;
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = path, .when_full = fieldlog::JournaldWhenFull::drop});
    CallTimes times;
    {
        const StderrTo stderr_file(dir.file("stderr.txt"));
        const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};
        const auto log = fieldlog::get("svc");
        for (int i = 0; i < kRecords; ++i) times.time([&] { log.info("queued", {{"i", i}}); });
    }
    const std::uint64_t queued = receiver.drain();
    CHECK(times.longest < 1s);  // a send that waited would wait for a reader that never comes
    CHECK(queued > 0);
    CHECK(sink->counters().dropped > 0);
    CHECK(queued + sink->counters().dropped == kRecords);
    CHECK(sink->counters().errors == sink->counters().dropped);
    CHECK(read_file(dir.file("stderr.txt"))
              .starts_with("fieldlog: journald sink " + path + ": send: Resource temporarily unavailable"));
}

TEST_CASE("the crash path waits for room at most 1 s, not at all once a wait ran out, and sends once there is room",
          "[journald]") {
    const TempDir dir;
    const std::string path = dir.file("full.sock");
    const SilentReceiver receiver(path);
    fill_queue(path);
    fieldlog::JournaldSink sink({.socket = path, .identifier = "crash"});  // wait_timeout: the default
    const FatalRecord record;
    const fieldlog::RecordView fatal = record.view();
    CallTimes full;
    full.time([&] { sink.write_on_crash({&fatal, 1}); });
    CHECK(full.longest >= 1s);
    CHECK(full.longest <= 1s + 2s);
    CHECK(sink.counters().dropped == 1);
    CallTimes wedged;
    wedged.time([&] { sink.write_on_crash({&fatal, 1}); });
    CHECK(wedged.longest < 1s);
    CHECK(sink.counters().dropped == 2);

    const std::uint64_t fill = receiver.drain();
    sink.write_on_crash({&fatal, 1});
    CHECK(sink.counters().dropped == 2);
    const std::string entry = receiver.next();
    CHECK(entry.find("\nMESSAGE=fatal signal SIGSEGV\n") != std::string::npos);
    CHECK(fill > 0);
}

TEST_CASE("a crash: the records before it and the fatal record reach journald, sync and async", "[journald]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    for (const std::string mode : {"sync", "async"}) {
        INFO(mode);
        const std::string socket = journald.socket();
        const char* argv[] = {FIELDLOG_SINK_HELPER, "journald-crash", socket.c_str(), mode.c_str(), nullptr};
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        pid_t child = -1;
        const int spawned = ::posix_spawn(&child, FIELDLOG_SINK_HELPER, &actions, nullptr, const_cast<char**>(argv), environ);
        posix_spawn_file_actions_destroy(&actions);
        REQUIRE(spawned == 0);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == SIGSEGV);
        REQUIRE(journald.read_everything());
        const std::vector<Entry> entries = journald.entries(child);
        REQUIRE(entries.size() == 4);
        for (std::size_t i = 0; i < 3; ++i) {
            const Entry sent = sent_fields(entries[i]);
            CHECK(sent.at("MESSAGE") == std::vector<std::string>{"before the crash"});
            CHECK(sent.at("I") == std::vector<std::string>{std::to_string(i)});
        }
        const Entry fatal = sent_fields(entries[3]);
        CHECK(fatal.at("MESSAGE") == std::vector<std::string>{"fatal signal SIGSEGV"});
        CHECK(fatal.at("PRIORITY") == std::vector<std::string>{"2"});
        CHECK(fatal.at("SYSLOG_IDENTIFIER") == std::vector<std::string>{"crash-child"});
    }
}

TEST_CASE("a burst of 200,000 records from four threads arrives whole, each record once, sync", "[journald][concurrent]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald, kBurstJournal);
    check_burst(journald, false, "burst-sync-" + std::to_string(::getpid()));
}

TEST_CASE("a burst of 200,000 records from four threads arrives whole, each record once, async", "[journald][concurrent]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald, kBurstJournal);
    check_burst(journald, true, "burst-async-" + std::to_string(::getpid()));
}

TEST_CASE("journald stopped (SIGSTOP): a caller waits at most wait_timeout, once, and the rest drop at once and are counted",
          "[journald][concurrent]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    const TempDir dir;
    constexpr auto kBound = 500ms;
    constexpr int kThreads = 4;
    constexpr int kPerThread = 50;
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "stopped", .wait_timeout = kBound});
    const LoggingTo logging{std::shared_ptr<fieldlog::Sink>(sink)};
    const auto log = fieldlog::get("svc");
    for (int i = 0; i < 3; ++i) log.info("before", {{"i", i}});
    REQUIRE(journald.read_everything());

    journald.pause();
    fill_queue(journald.socket());
    std::vector<CallTimes> times(kThreads);
    const auto start = std::chrono::steady_clock::now();
    {
        const StderrTo stderr_file(dir.file("stderr.txt"));
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < kPerThread; ++i) times[t].time([&] { log.info("while stopped", {{"i", i}}); });
            });
        }
        for (std::thread& thread : threads) thread.join();
    }
    const auto whole = std::chrono::steady_clock::now() - start;
    journald.resume();
    auto longest = std::chrono::steady_clock::duration::zero();
    for (const CallTimes& t : times) longest = std::max(longest, t.longest);
    CHECK(longest >= kBound);       // a record waited for journald...
    CHECK(longest <= kBound + 2s);  // ...at most the bound (a thread waiting for the sink's lock meanwhile: less)
    CHECK(whole < 10 * kBound);     // the others did not wait again: each would cost the bound
    CHECK(sink->counters().dropped == kThreads * kPerThread);
    CHECK(sink->counters().errors == kThreads * kPerThread);
    CHECK(read_file(dir.file("stderr.txt"))
              .starts_with("fieldlog: journald sink " + journald.socket() + ": send: no room for 500 ms"));

    REQUIRE(journald.read_everything());  // journald read what its queue held
    for (int i = 0; i < 3; ++i) log.info("after", {{"i", i}});
    REQUIRE(journald.read_everything());
    CHECK(sink->counters().dropped == kThreads * kPerThread);  // journald takes records again: none is lost
    const std::vector<Entry> entries = journald.entries();
    REQUIRE(entries.size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        CHECK(sent_fields(entries[i]).at("MESSAGE") == std::vector<std::string>{i < 3 ? "before" : "after"});
    }
}

TEST_CASE("async mode, journald stopped: the writer thread waits for it, the caller does not", "[journald][concurrent]") {
    FIELDLOG_JOURNALD_OR_SKIP(journald);
    constexpr int kRecords = 2000;  // far fewer than a ring holds
    auto sink = std::make_shared<fieldlog::JournaldSink>(
        fieldlog::JournaldSinkOptions{.socket = journald.socket(), .identifier = "async-stopped"});
    fieldlog::configure({.level = Level::info,
                         .async = {.enabled = true},
                         .sinks = {{.target = std::shared_ptr<fieldlog::Sink>(sink)}},
                         .clock = &fieldlog_test::fixed_clock});
    const auto log = fieldlog::get("svc");
    journald.pause();
    fill_queue(journald.socket());
    CallTimes times;
    times.time([&] {
        for (int i = 0; i < kRecords; ++i) log.info("while stopped", {{"i", i}});
    });
    journald.resume();
    fieldlog::flush();
    const fieldlog::SinkCounters counters = sink->counters();
    fieldlog_test::release_sinks();
    // Blocked by the writer, the calls would have taken its whole wait (10 s) and lost records.
    CHECK(times.whole < 5s);
    CHECK(counters.records == kRecords);
    CHECK(counters.dropped == 0);
    REQUIRE(journald.read_everything());
    CHECK(journald.entries().size() == kRecords);
}

TEST_CASE("when_full and wait_timeout: waiting 10 s is the default, drop never waits, a wait of 0 is an error",
          "[journald]") {
    const auto parsed = [](const std::string& keys) {
        const fieldlog::Config config = fieldlog::Config::parse("[[sinks]]\ntype = \"journald\"\n" + keys, "app.toml");
        return fieldlog_test::options_of<fieldlog::JournaldSinkOptions>(config.sinks.at(0).target);
    };
    const auto error = [](const std::string& keys) {
        try {
            (void)fieldlog::Config::parse("[[sinks]]\ntype = \"journald\"\n" + keys, "app.toml");
        } catch (const fieldlog::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(parsed("").when_full == fieldlog::JournaldWhenFull::wait);
    CHECK(parsed("").wait_timeout == 10s);
    CHECK(parsed("when_full = \"drop\"").when_full == fieldlog::JournaldWhenFull::drop);
    CHECK(parsed("when_full = \"wait\"\nwait_timeout = \"1500ms\"").wait_timeout == 1500ms);
    CHECK(error("when_full = \"block\"") == "app.toml:3: sinks[0].when_full: expected wait or drop, got \"block\"");
    CHECK(error("wait_timeout = \"0s\"") ==
          "app.toml:3: sinks[0].wait_timeout: expected a duration above 0 like \"10s\" (when_full = \"drop\" never "
          "waits), got \"0s\"");
    std::string in_code;
    try {
        fieldlog::configure({.sinks = {{.target = fieldlog::JournaldSinkOptions{.wait_timeout = 0ms}}}});
    } catch (const fieldlog::ConfigError& e) {
        in_code = e.what();
    }
    CHECK(in_code == "sinks[0]: journald wait_timeout must be above 0 (when_full = drop never waits)");
    fieldlog_test::release_sinks();
}

TEST_CASE("the journald sink takes json only: another format is a ConfigError", "[journald]") {
    const TempDir dir;
    const fieldlog::JournaldSinkOptions options{.socket = dir.file("socket")};
    std::string error;
    try {
        fieldlog::configure({.sinks = {{.target = options, .format = fieldlog::Format::logfmt}}});
    } catch (const fieldlog::ConfigError& e) {
        error = e.what();
    }
    CHECK(error == "sinks[0]: a journald sink takes json records only, not logfmt");
    error.clear();
    try {
        fieldlog::configure({.sinks = {{.target = fieldlog::JournaldSinkOptions{.socket = std::string(200, 'x')}}}});
    } catch (const fieldlog::ConfigError& e) {
        error = e.what();
    }
    CHECK(error == "sinks[0]: journald socket path '" + std::string(200, 'x') + "' is longer than 107 bytes");
    fieldlog_test::release_sinks();
}
