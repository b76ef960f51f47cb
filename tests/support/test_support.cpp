// SPDX-License-Identifier: MIT
#include "support/test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <thread>

#include <catch2/catch.hpp>

extern char** environ;

namespace fieldlog_test {

TempDir::TempDir() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("fieldlog-test-" + std::to_string(::getpid()) + "-" + std::to_string(random()));
    std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> read_lines(const std::string& path) {
    std::vector<std::string> lines;
    std::ifstream in(path, std::ios::binary);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string jsonl_file_errors(const std::string& path) {
    const std::string command = std::string(FIELDLOG_PYTHON) + " " + FIELDLOG_JSONL_CHECK + " '" + path + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return "cannot run " + command;
    std::string output;
    char chunk[4096];
    while (const std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
    const int status = ::pclose(pipe);
    if (status != 0 && output.empty()) output = "checker failed with status " + std::to_string(status);
    return status == 0 ? std::string{} : output;
}

std::optional<std::string> gunzip(const std::string& path) {
    FILE* pipe = ::popen(("gzip -dc '" + path + "' 2>/dev/null").c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string output;
    char chunk[65536];
    while (const std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, n);
    if (::pclose(pipe) != 0) return std::nullopt;
    return output;
}

bool gzip_accepts(const std::string& path) { return std::system(("gzip -t '" + path + "' 2>/dev/null").c_str()) == 0; }

std::string jsonl_errors(const std::vector<std::string>& lines) {
    const TempDir dir;
    const std::string path = dir.file("lines.jsonl");
    {
        std::ofstream out(path, std::ios::binary);
        for (const std::string& line : lines) out << line << '\n';
    }
    return jsonl_file_errors(path);
}

StderrTo::StderrTo(const std::string& path) : saved_(::dup(STDERR_FILENO)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
}

StderrTo::~StderrTo() {
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
}

TcpListener::TcpListener(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    socklen_t length = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        const int error = errno;
        ::close(fd_);
        throw std::system_error(error, std::generic_category(), "listen on 127.0.0.1:" + std::to_string(port));
    }
    port_ = ntohs(address.sin_port);
}

TcpListener::~TcpListener() { ::close(fd_); }

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

int spawn_process(const std::vector<std::string>& args, const std::string& stdout_to, const std::string& stderr_to) {
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    REQUIRE(::posix_spawn_file_actions_init(&actions) == 0);
    const std::pair<int, const std::string*> redirections[] = {{STDOUT_FILENO, &stdout_to}, {STDERR_FILENO, &stderr_to}};
    for (const auto& [fd, path] : redirections) {
        if (path->empty()) continue;
        REQUIRE(::posix_spawn_file_actions_addopen(&actions, fd, path->c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600) == 0);
    }
    pid_t pid = 0;
    const int error = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    REQUIRE(error == 0);
    return pid;
}

fieldlog::Timestamp fixed_clock() noexcept { return fieldlog::Timestamp(1796027891, 123456789); }

std::string info_line(std::string_view msg, std::string_view members, std::string_view logger) {
    return R"({"ts":"2026-11-30T08:38:11.123456789Z","level":"info","logger":")" + std::string(logger) +
           R"(","msg":")" + std::string(msg) + '"' + std::string(members) + "}";
}

std::shared_ptr<fieldlog::MemorySink> capture(fieldlog::Format format, bool async) {
    auto sink = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::trace,
                                         .format = format,
                                         .async = {.enabled = async},
                                         .sinks = {fieldlog::SinkConfig{.target = sink}},
                                         .clock = &fixed_clock});
    return sink;
}

fieldlog::Config no_output() {
    return {.sinks = {{.target = std::make_shared<fieldlog::NullSink>(), .level = fieldlog::Level::off}}};
}

void release_sinks() { fieldlog::configure(no_output()); }

}  // namespace fieldlog_test
