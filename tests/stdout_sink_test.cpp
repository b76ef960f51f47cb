// SPDX-License-Identifier: MIT
// The stdout/stderr sinks: one write per record or batch, EPIPE counted without SIGPIPE death
// (pipe and socket), and two processes on one pipe never interleaving records.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "support/deliver.hpp"
#include "support/test_support.hpp"

extern char** environ;

namespace {

/// Points descriptor `target` at `replacement` while it lives (Catch's own output is flushed
/// first and goes to the real descriptor again afterwards).
class Redirect {
public:
    Redirect(int target, int replacement) : target_(target) {
        std::cout.flush();
        std::fflush(nullptr);
        saved_ = ::dup(target);
        ::dup2(replacement, target);
    }
    ~Redirect() {
        ::dup2(saved_, target_);
        ::close(saved_);
    }
    Redirect(const Redirect&) = delete;
    Redirect& operator=(const Redirect&) = delete;

private:
    int target_;
    int saved_;
};

std::string read_all(int fd) {
    std::string text;
    char chunk[65536];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
    return text;
}

fieldlog::RecordView view(const std::string& line) {
    return fieldlog::RecordView{{line.data(), line.size()}, fieldlog::Level::info, {}};
}

}  // namespace

TEST_CASE("the stdout and stderr sinks write every record to their descriptor", "[stdout_sink]") {
    for (const fieldlog::StdStream stream : {fieldlog::StdStream::out, fieldlog::StdStream::err}) {
        const int fd = stream == fieldlog::StdStream::out ? STDOUT_FILENO : STDERR_FILENO;
        DYNAMIC_SECTION("descriptor " << fd) {
            int pipe_fds[2];
            REQUIRE(::pipe(pipe_fds) == 0);
            const std::vector<std::string> lines = {"{\"n\":1}\n", "{\"n\":2}\n", "{\"n\":3}\n", "{\"n\":4}\n"};
            fieldlog::SinkCounters counters;
            {
                const Redirect redirect(fd, pipe_fds[1]);
                fieldlog::StdoutSink sink(stream);
                fieldlog_test::deliver(sink, view(lines[0]));
                const std::vector<fieldlog::RecordView> batch = {view(lines[1]), view(lines[2]), view(lines[3])};
                fieldlog_test::deliver(sink, batch);
                counters = sink.counters();
                CHECK_FALSE(sink.info().terminal);
            }
            ::close(pipe_fds[1]);
            CHECK(read_all(pipe_fds[0]) == lines[0] + lines[1] + lines[2] + lines[3]);
            ::close(pipe_fds[0]);
            CHECK(counters.records == 4);
            CHECK(counters.bytes == 32);
        }
    }
}

TEST_CASE("a vanished reader is a counted EPIPE, not the death of the process", "[stdout_sink]") {
    struct sigaction default_action {}, previous {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &default_action, &previous);  // the worst case: SIGPIPE would kill us

    for (const bool socket : {false, true}) {
        DYNAMIC_SECTION((socket ? "a socket (like journald's stdout)" : "a pipe")) {
            int fds[2];
            REQUIRE((socket ? ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : ::pipe(fds)) == 0);
            ::close(fds[0]);  // the reader is gone
            const int quiet = ::open("/dev/null", O_WRONLY);
            fieldlog::SinkCounters counters;
            {
                const Redirect out(STDOUT_FILENO, fds[1]);
                const Redirect err(STDERR_FILENO, quiet);  // the sink reports the failure there
                fieldlog::StdoutSink sink(fieldlog::StdStream::out);
                const std::string line = "{\"n\":1}\n";
                fieldlog_test::deliver(sink, view(line));
                const std::vector<fieldlog::RecordView> batch = {view(line), view(line), view(line)};
                fieldlog_test::deliver(sink, batch);
                counters = sink.counters();
            }
            ::close(fds[1]);
            ::close(quiet);
            CHECK(counters.records == 4);
            CHECK(counters.dropped == 4);
            CHECK(counters.errors == 2);
            sigset_t pending;
            sigpending(&pending);
            CHECK(sigismember(&pending, SIGPIPE) == 0);  // none left to strike later
        }
    }
    ::sigaction(SIGPIPE, &previous, nullptr);
}

TEST_CASE("two processes writing batches to one pipe never interleave records", "[stdout_sink]") {
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    constexpr int kCount = 3000;
    const std::string count = std::to_string(kCount);
    std::vector<pid_t> writers;
    for (const char* id : {"A", "B"}) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
        const char* argv[] = {FIELDLOG_SINK_HELPER, "pipe-writer", id, count.c_str(), nullptr};
        pid_t pid = 0;
        REQUIRE(::posix_spawn(&pid, FIELDLOG_SINK_HELPER, &actions, nullptr, const_cast<char**>(argv), environ) == 0);
        posix_spawn_file_actions_destroy(&actions);
        writers.push_back(pid);
    }
    ::close(pipe_fds[1]);
    const std::string text = read_all(pipe_fds[0]);
    ::close(pipe_fds[0]);
    for (const pid_t pid : writers) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }

    std::map<char, int> next_seq;
    std::size_t bad = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = text.find('\n', start);
        REQUIRE(end != std::string::npos);
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        // {"writer":"A","seq":N,"pad":"AAA…"} — the pad is the writer's letter, its length set by N.
        const char writer = line.size() > 12 ? line[11] : '?';
        const int seq = next_seq[writer]++;
        const std::size_t padding = 100 + static_cast<std::size_t>((seq * 7919) % 3900);
        const std::string expected = std::string("{\"writer\":\"") + writer + "\",\"seq\":" + std::to_string(seq) +
                                     ",\"pad\":\"" + std::string(padding, writer) + "\"}";
        if (line != expected) ++bad;
    }
    CHECK(bad == 0);
    CHECK(next_seq['A'] == kCount);
    CHECK(next_seq['B'] == kCount);
}
