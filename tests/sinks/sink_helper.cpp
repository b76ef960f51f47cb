// SPDX-License-Identifier: MIT
// A child process for the sink tests that need a second process or a real peer: two writers
// on one pipe, a service that logrotate rotates and signals, a sender for rsyslog, a process
// killed while it compresses a rotated file.
//   sink_helper pipe-writer ID COUNT          records of varied size to stdout, in batches
//   sink_helper file-logger PATH THREADS      logs until SIGTERM; SIGHUP → reopen_files();
//                                             prints "thread N: COUNT" per thread at the end
//   sink_helper syslog-sender ADDRESS COUNT EXPECTED
//                                             RFC 5424 over UDP, the same lines to EXPECTED
//   sink_helper compressing-logger PATH       fills PATH past 16 MiB, rotates it once with
//                                             gzip, prints "rotated" and waits to be killed
//   sink_helper syslog-stream ADDRESS TRANSPORT CA_FILE BUFFER DROPPED [CERT KEY]
//                                             numbered records over TCP, TLS, RELP or RELP
//                                             inside TLS (a client certificate: CERT, KEY)
//                                             until SIGTERM, the numbers of those dropped to
//                                             DROPPED, then prints the sink's counters
//   sink_helper journald-crash SOCKET sync|async
//                                             a journald sink (identifier crash-child), three
//                                             records (async: flushed), then SIGSEGV through
//                                             fieldlog's handler
//   sink_helper throughput FILE COUNT [tcp|tls|relp|relp-tls=ADDRESS] [ca=F cert=F key=F]
//                                             COUNT records through each sink named, one after
//                                             the other, then the file sink; prints records/s
//                                             handed over and taken by the receiver, and drops
//   sink_helper syslog-records ADDRESS COUNT EXPECTED [transport=tls|relp|relp-tls ca=F
//                              cert=F key=F server_name=N]
//                                             COUNT records of every field kind through the
//                                             syslog sink, the same lines to EXPECTED; waits
//                                             for the receiver's acknowledgement (or three
//                                             failed connections), prints the counters
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldlog/fieldlog.hpp"

namespace {

/// The syslog transport named as in TOML, or none.
std::optional<fieldlog::SyslogTransport> transport_named(const std::string& name) {
    if (name == "tcp") return fieldlog::SyslogTransport::tcp;
    if (name == "tls") return fieldlog::SyslogTransport::tls;
    if (name == "relp") return fieldlog::SyslogTransport::relp;
    if (name == "relp-tls") return fieldlog::SyslogTransport::relp_tls;
    return std::nullopt;
}

bool over_tls(fieldlog::SyslogTransport transport) {
    return transport == fieldlog::SyslogTransport::tls || transport == fieldlog::SyslogTransport::relp_tls;
}

int usage() {
    std::fprintf(stderr,
                 "usage: sink_helper pipe-writer ID COUNT\n"
                 "       sink_helper file-logger PATH THREADS\n"
                 "       sink_helper syslog-sender ADDRESS COUNT EXPECTED\n"
                 "       sink_helper compressing-logger PATH\n"
                 "       sink_helper syslog-stream ADDRESS TRANSPORT CA_FILE BUFFER DROPPED [CERT KEY]\n"
                 "       sink_helper journald-crash SOCKET sync|async\n"
                 "       sink_helper throughput FILE COUNT [tcp|tls|relp|relp-tls=ADDRESS] [ca=F cert=F key=F]\n"
                 "       sink_helper syslog-records ADDRESS COUNT EXPECTED [transport=tls|relp|relp-tls ca=F "
                 "cert=F key=F server_name=N]\n");
    return 2;
}

/// Writes COUNT records of 100 to ~4000 bytes (all ≤ PIPE_BUF) in batches of 16.
int pipe_writer(const std::string& id, long count) {
    fieldlog::StdoutSink sink(fieldlog::StdStream::out);
    std::vector<std::string> lines;
    std::vector<fieldlog::RecordView> batch;
    for (long i = 0; i < count; ++i) {
        const std::size_t padding = 100 + static_cast<std::size_t>((i * 7919) % 3900);
        lines.push_back("{\"writer\":\"" + id + "\",\"seq\":" + std::to_string(i) + ",\"pad\":\"" +
                        std::string(padding, id[0]) + "\"}\n");
        if (lines.size() == 16 || i + 1 == count) {
            batch.clear();
            for (const std::string& line : lines) batch.push_back({{line.data(), line.size()}, fieldlog::Level::info, {}});
            sink.write_batch(batch);
            lines.clear();
        }
    }
    const fieldlog::SinkCounters counters = sink.counters();  // driven directly: only its own reports
    return counters.dropped == 0 && counters.errors == 0 ? 0 : 1;
}

/// Logs numbered records from THREADS threads until SIGTERM. SIGHUP reopens the file, as a
/// service without a config file would wire it.
int file_logger(const std::string& path, int threads) {
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGHUP);
    sigaddset(&handled, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &handled, nullptr);  // inherited by the threads below

    fieldlog::configure(fieldlog::Config{
        .level = fieldlog::Level::info,
        .sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = path, .reopen_check = std::chrono::milliseconds(0)}}}});

    std::atomic<bool> stop{false};
    std::vector<long> written(static_cast<std::size_t>(threads), 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            const fieldlog::Logger log = fieldlog::get("rotate");
            long seq = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                log.info("record", {{"thread", t}, {"seq", seq}});
                ++seq;
                if (seq % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            written[static_cast<std::size_t>(t)] = seq;
        });
    }
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) {
        int signal = 0;
        sigwait(&handled, &signal);
        if (signal == SIGHUP) {
            fieldlog::reopen_files();
            continue;
        }
        break;
    }
    stop.store(true);
    for (std::thread& worker : workers) worker.join();
    fieldlog::shutdown();
    for (int t = 0; t < threads; ++t) std::printf("thread %d: %ld\n", t, written[static_cast<std::size_t>(t)]);
    return 0;
}

/// Sends COUNT records framed as RFC 5424 to ADDRESS and writes the same JSON lines to EXPECTED.
int syslog_sender(const std::string& address, long count, const std::string& expected) {
    fieldlog::configure(fieldlog::Config{
        .level = fieldlog::Level::trace,
        .sinks = {fieldlog::SinkConfig{.target = fieldlog::UdpSinkOptions{.address = address,
                                                                         .framing = fieldlog::UdpFraming::rfc5424,
                                                                         .max_datagram = 8192,
                                                                         .app_name = "fieldlog-test"}},
                  fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = expected}}}});
    const fieldlog::Logger log = fieldlog::get("syslog");
    const fieldlog::Level levels[] = {fieldlog::Level::debug, fieldlog::Level::info, fieldlog::Level::warn,
                                      fieldlog::Level::error};
    for (long i = 0; i < count; ++i) {
        log.log(levels[i % 4], "müde \"quoted\" Grüße ✓", {{"seq", i}, {"path", "/a b/c?d=e&f"}, {"ratio", 0.25 * static_cast<double>(i)}});
        if (i % 32 == 31) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // rsyslog's default buffer is small
    }
    fieldlog::shutdown();
    return 0;
}

/// Writes records of varied digits until PATH passes 16 MiB, so the next one rotates it; the
/// retention worker then compresses PATH.1 at level 9, long enough for the test to kill this
/// process in the middle of it.
int compressing_logger(const std::string& path) {
    constexpr std::uint64_t kFileSize = 16 << 20;
    fieldlog::FileSink sink({.path = path, .max_size = kFileSize, .keep = 2,
                             .compress = fieldlog::FileCompression::gzip, .compression_level = 9});
    std::uint64_t random = 0x9e3779b97f4a7c15;
    std::uint64_t written = 0;
    for (long n = 0; written <= kFileSize; ++n) {
        random ^= random << 13;  // xorshift: digits that do not compress away
        random ^= random >> 7;
        random ^= random << 17;
        const std::string line = "{\"n\":" + std::to_string(n) + ",\"r\":" + std::to_string(random) + "}\n";
        sink.write({{line.data(), line.size()}, fieldlog::Level::info, {}});
        written += line.size();
    }
    sink.flush();
    std::printf("rotated\n");
    std::fflush(stdout);
    for (;;) ::pause();
}

/// Logs numbered records to a syslog sink over TCP, TLS, RELP or RELP inside TLS (with a client
/// certificate when `cert_file` is given), in bursts of 64 with a pause of 200 µs between them,
/// until SIGTERM. Logging is synchronous, so the sink's drop counter tells at once whether this
/// record was dropped: their numbers go to DROPPED, one a line. Then waits (up to 10 s) until
/// the receiver acknowledged the whole buffer and prints the sink's counters.
int syslog_stream(const std::string& address, fieldlog::SyslogTransport transport, const std::string& ca_file,
                  std::size_t buffer_bytes, const std::string& dropped_path, const std::string& cert_file,
                  const std::string& key_file) {
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &handled, nullptr);

    const bool tls = over_tls(transport);
    auto sink = std::make_shared<fieldlog::SyslogSink>(fieldlog::SyslogSinkOptions{
        .address = address,
        .transport = transport,
        .ca_file = tls ? ca_file : "",
        .cert_file = cert_file,
        .key_file = key_file,
        .server_name = tls ? "localhost" : "",
        .buffer_bytes = buffer_bytes,
        .reconnect_max = std::chrono::milliseconds(100),
        .drain_timeout = std::chrono::milliseconds(5000),
        .app_name = "fieldlog-test"});
    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::info, .sinks = {fieldlog::SinkConfig{.target = sink}}});

    std::atomic<bool> stop{false};
    std::vector<long> dropped;
    dropped.reserve(1 << 20);
    std::thread logger([&] {
        const fieldlog::Logger log = fieldlog::get("stream");
        for (long seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
            const std::uint64_t before = sink->counters().dropped;
            log.info("record", {{"seq", seq}, {"pad", "0123456789abcdef0123456789abcdef0123456789abcdef"}});
            if (sink->counters().dropped != before) dropped.push_back(seq);
            if (seq % 64 == 63) std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    std::printf("ready\n");
    std::fflush(stdout);
    int signal = 0;
    sigwait(&handled, &signal);
    stop.store(true);
    logger.join();
    fieldlog::shutdown();  // flushes our sink and lets it be: its thread goes on sending
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sink->stats().buffered_bytes > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const fieldlog::SinkCounters counters = sink->counters();
    const fieldlog::SyslogSinkStats stats = sink->stats();
    if (FILE* out = std::fopen(dropped_path.c_str(), "w")) {
        for (const long seq : dropped) std::fprintf(out, "%ld\n", seq);
        std::fclose(out);
    }
    std::printf("records %llu dropped %llu connects %llu resent %llu errors %llu unacknowledged_bytes %llu\n",
                static_cast<unsigned long long>(counters.records), static_cast<unsigned long long>(counters.dropped),
                static_cast<unsigned long long>(stats.connects), static_cast<unsigned long long>(stats.resent_records),
                static_cast<unsigned long long>(counters.errors), static_cast<unsigned long long>(stats.buffered_bytes));
    return 0;
}

/// Records per second through each syslog sink named in `targets` (tcp, tls, relp or
/// relp-tls=ADDRESS; TLS settings ca, cert, key), one after the other, then through the file
/// sink at `path`: COUNT records logged synchronously from one thread, the rate they were
/// handed over at, and the rate the receiver took them at: until its TCP acknowledged them all
/// (tcp, tls), until it answered them all (relp, relp-tls), until shutdown() flushed the file. Prints one line a sink: NAME handed_over_per_s N
/// taken_per_s N taken N dropped N unacknowledged_bytes N.
int throughput(const std::string& path, long count, const std::vector<std::string>& targets) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kTimeout = std::chrono::seconds(120);
    const auto log_all = [count] {
        const fieldlog::Logger log = fieldlog::get("throughput");
        for (long seq = 0; seq < count; ++seq) {
            log.info("record", {{"seq", seq}, {"pad", "0123456789abcdef0123456789abcdef0123456789abcdef"}});
        }
    };
    std::string ca_file;
    std::string cert_file;
    std::string key_file;
    std::vector<std::pair<std::string, std::string>> sinks;
    for (const std::string& target : targets) {
        const std::size_t equals = target.find('=');
        const std::string key = target.substr(0, equals);
        const std::string value = equals == std::string::npos ? "" : target.substr(equals + 1);
        if (key == "ca") {
            ca_file = value;
        } else if (key == "cert") {
            cert_file = value;
        } else if (key == "key") {
            key_file = value;
        } else if (transport_named(key)) {
            sinks.emplace_back(key, value);
        } else {
            std::fprintf(stderr, "sink_helper: unknown target '%s'\n", target.c_str());
            return 2;
        }
    }
    const auto print = [count](const std::string& name, double logged_seconds, double taken_seconds,
                               std::uint64_t dropped, std::uint64_t unacknowledged) {
        const std::uint64_t taken = unacknowledged == 0 ? static_cast<std::uint64_t>(count) - dropped : 0;
        std::printf("%s handed_over_per_s %.0f taken_per_s %.0f taken %llu dropped %llu unacknowledged_bytes %llu\n",
                    name.c_str(), static_cast<double>(count) / logged_seconds,
                    static_cast<double>(taken) / taken_seconds, static_cast<unsigned long long>(taken),
                    static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(unacknowledged));
        std::fflush(stdout);
    };
    for (const auto& [name, where] : sinks) {
        const fieldlog::SyslogTransport transport = *transport_named(name);
        const bool tls = over_tls(transport);
        const auto sink = std::make_shared<fieldlog::SyslogSink>(fieldlog::SyslogSinkOptions{
            .address = where,
            .transport = transport,
            .ca_file = tls ? ca_file : "",
            .cert_file = tls ? cert_file : "",
            .key_file = tls ? key_file : "",
            .server_name = tls ? "localhost" : "",
            .buffer_bytes = 256u << 20,
            .app_name = "fieldlog-test"});
        fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::info, .sinks = {fieldlog::SinkConfig{.target = sink}}});
        const Clock::time_point start = Clock::now();
        log_all();
        const double logged_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        while (sink->stats().buffered_bytes > 0 && Clock::now() - start < kTimeout) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        const std::uint64_t unacknowledged = sink->stats().buffered_bytes;
        const double taken_seconds = std::chrono::duration<double>(Clock::now() - start).count();
        print(name, logged_seconds, taken_seconds, sink->counters().dropped, unacknowledged);
        fieldlog::shutdown();
    }

    fieldlog::configure(fieldlog::Config{.level = fieldlog::Level::info,
                                         .sinks = {fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = path}}}});
    const Clock::time_point file_start = Clock::now();
    log_all();
    const double logged_seconds = std::chrono::duration<double>(Clock::now() - file_start).count();
    const std::uint64_t dropped = fieldlog::metrics().sinks.at(0).counters.dropped;
    fieldlog::shutdown();
    print("file", logged_seconds, std::chrono::duration<double>(Clock::now() - file_start).count(), dropped, 0);
    return 0;
}

/// Logs COUNT records through a syslog sink set by `settings` (key=value: transport, ca, cert,
/// key, server_name) and writes the same lines to EXPECTED, with every kind of field, each
/// level from debug to error and three logger names. Then waits up to 10 s until the receiver
/// acknowledged every byte, or until three connection attempts failed (a receiver that refuses
/// us), and prints the sink's counters before it is closed (its drops at close are then the
/// records still unacknowledged), the longest log call and how long closing it took.
int syslog_records(const std::string& address, long count, const std::string& expected,
                   const std::vector<std::string>& settings) {
    using Clock = std::chrono::steady_clock;
    fieldlog::SyslogSinkOptions options{.address = address,
                                        .reconnect_max = std::chrono::milliseconds(100),
                                        .drain_timeout = std::chrono::milliseconds(200),
                                        .app_name = "fieldlog-test",
                                        .hostname = "fieldlog-host"};
    for (const std::string& setting : settings) {
        const std::size_t equals = setting.find('=');
        const std::string key = setting.substr(0, equals);
        const std::string value = equals == std::string::npos ? "" : setting.substr(equals + 1);
        if (key == "transport" && transport_named(value)) {
            options.transport = *transport_named(value);
        } else if (key == "ca") {
            options.ca_file = value;
        } else if (key == "cert") {
            options.cert_file = value;
        } else if (key == "key") {
            options.key_file = value;
        } else if (key == "server_name") {
            options.server_name = value;
        } else {
            std::fprintf(stderr, "sink_helper: unknown setting '%s'\n", setting.c_str());
            return 2;
        }
    }
    auto sink = std::make_shared<fieldlog::SyslogSink>(options);
    fieldlog::configure(fieldlog::Config{
        .level = fieldlog::Level::trace,
        .sinks = {fieldlog::SinkConfig{.target = sink},
                  fieldlog::SinkConfig{.target = fieldlog::FileSinkOptions{.path = expected}}}});
    const fieldlog::Logger loggers[] = {fieldlog::get("syslog"), fieldlog::get("db.pool"),
                                        fieldlog::get("http").with({{"service", "checkout"}, {"version", 3}})};
    const fieldlog::Level levels[] = {fieldlog::Level::debug, fieldlog::Level::info, fieldlog::Level::warn,
                                      fieldlog::Level::error};
    Clock::duration longest{};
    for (long i = 0; i < count; ++i) {
        const Clock::time_point start = Clock::now();
        loggers[i % 3].log(levels[i % 4], "müde \"quoted\" Grüße ✓ \\ tab\there",
                           {{"seq", i},
                            {"path", "/a b/c?d=e&f"},
                            {"ratio", 0.25 * static_cast<double>(i)},
                            {"ok", i % 2 == 0},
                            {"none", nullptr},
                            {"negative", -i},
                            {"latency", std::chrono::microseconds(1250 + i)},
                            {"control", "bell\a nul-free \x1f end"}});
        longest = std::max(longest, Clock::now() - start);
    }
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (sink->stats().buffered_bytes > 0 && sink->counters().errors < 3 && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const fieldlog::SinkCounters counters = sink->counters();
    const fieldlog::SyslogSinkStats stats = sink->stats();
    // A configuration without the sink lets go of it: `sink` is then its last owner, and
    // closing it waits up to drain_timeout for the receiver.
    fieldlog::configure(fieldlog::Config{.sinks = {fieldlog::SinkConfig{.target = std::make_shared<fieldlog::NullSink>()}}});
    const Clock::time_point close_start = Clock::now();
    sink.reset();
    const auto close_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - close_start).count();
    std::printf("records %llu dropped %llu errors %llu connects %llu unacknowledged_bytes %llu "
                "longest_call_us %lld close_ms %lld\n",
                static_cast<unsigned long long>(counters.records), static_cast<unsigned long long>(counters.dropped),
                static_cast<unsigned long long>(counters.errors), static_cast<unsigned long long>(stats.connects),
                static_cast<unsigned long long>(stats.buffered_bytes),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::microseconds>(longest).count()),
                static_cast<long long>(close_ms));
    fieldlog::shutdown();
    return 0;
}

/// Three records to the journald sink at `socket` (async: flushed), then a crash: fieldlog's
/// crash handler (Config::crash_handlers, on by default) writes the `fatal` record and the
/// process dies by SIGSEGV.
int journald_crash(const std::string& socket, bool async) {
    fieldlog::configure({.level = fieldlog::Level::info,
                         .async = {.enabled = async},
                         .sinks = {{.target = fieldlog::JournaldSinkOptions{.socket = socket, .identifier = "crash-child"}}}});
    const fieldlog::Logger log = fieldlog::get("child");
    for (int i = 0; i < 3; ++i) log.info("before the crash", {{"i", i}});
    // Records still queued for journald when a crash comes may be lost (docs/sinks.md): these
    // are written first, so that what arrives does not depend on the writer thread's timing.
    if (async) fieldlog::flush();
    ::raise(SIGSEGV);
    return 1;  // not reached: the handler ends the process by the signal
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string mode = argv[1];
    if (mode == "pipe-writer" && argc == 4) return pipe_writer(argv[2], std::atol(argv[3]));
    if (mode == "file-logger" && argc == 4) return file_logger(argv[2], std::atoi(argv[3]));
    if (mode == "syslog-sender" && argc == 5) return syslog_sender(argv[2], std::atol(argv[3]), argv[4]);
    if (mode == "compressing-logger" && argc == 3) return compressing_logger(argv[2]);
    if (mode == "syslog-stream" && (argc == 7 || argc == 9) && transport_named(argv[3])) {
        return syslog_stream(argv[2], *transport_named(argv[3]), argv[4], static_cast<std::size_t>(std::atol(argv[5])),
                             argv[6], argc == 9 ? argv[7] : "", argc == 9 ? argv[8] : "");
    }
    if (mode == "journald-crash" && argc == 4) return journald_crash(argv[2], std::string_view(argv[3]) == "async");
    if (mode == "throughput" && argc >= 4) {
        return throughput(argv[2], std::atol(argv[3]), std::vector<std::string>(argv + 4, argv + argc));
    }
    if (mode == "syslog-records" && argc >= 5) {
        return syslog_records(argv[2], std::atol(argv[3]), argv[4], std::vector<std::string>(argv + 5, argv + argc));
    }
    return usage();
}
