// SPDX-License-Identifier: MIT
// fieldlog_http_service: the example service (README.md). Parses the options, sets up the
// chosen logger, serves until SIGTERM/SIGINT, then drains: stops accepting, answers the
// requests in flight, finishes queued settlement work, and flushes and closes the log.
//   fieldlog_http_service [--logger=fieldlog|spdlog] [--config=examples/fieldlog.toml]
//                         [--log-file=logs/spdlog.log] [--host=127.0.0.1] [--port=8080]
//                         [--port-file=PATH] [--threads=16] [--work-threads=2]
//                         [--otlp=http://localhost:4318/v1/logs]
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <fieldlog/config.hpp>

#include "alloc_counter.hpp"
#include "service.hpp"
#include "service_log.hpp"

namespace {

using namespace http_service;

struct Options {
    std::string logger = "fieldlog";
    http_service::RequestContext context = http_service::RequestContext::scope;
    std::string config;  ///< fieldlog: --config, else FIELDLOG_CONFIG, else examples/fieldlog.toml
    std::string log_file = "logs/spdlog.log";
    std::string port_file;
    std::string otlp;  ///< fieldlog: an OTLP endpoint to export to as well
    ServiceOptions service;
};

constexpr const char* kUsage =
    "usage: fieldlog_http_service [--logger=fieldlog|spdlog] [--context=scope|with] [--config=FILE]\n"
    "                             [--log-file=FILE] [--host=ADDR] [--port=N] [--port-file=FILE] [--threads=N]\n"
    "                             [--work-threads=N] [--otlp=URL]\n"
    "  --logger        fieldlog (default; configured by --config) or spdlog (async, JSON lines to --log-file)\n"
    "  --context       fieldlog's request context: a Scope per request (default) or with() children\n"
    "  --config        fieldlog's TOML file (default: $FIELDLOG_CONFIG, else examples/fieldlog.toml)\n"
    "  --log-file      spdlog's output file (default logs/spdlog.log)\n"
    "  --host, --port  where to listen (default 127.0.0.1:8080; port 0 takes any free port)\n"
    "  --port-file     write the port there once listening (for scripts and tests)\n"
    "  --threads       connection threads (default 16; a keep-alive connection holds one)\n"
    "  --work-threads  settlement worker threads (default 2)\n"
    "  --otlp          fieldlog: also export every record to this OTLP/HTTP endpoint\n"
    "                  (like http://localhost:4318/v1/logs; a SIGHUP reload keeps only the file's sinks)\n";

bool parse_count(std::string_view text, std::size_t& out, std::size_t min) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size() && out >= min;
}

/// Parses argv into `o`; prints what is wrong and returns false on a bad option.
bool parse_options(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const auto eq = arg.find('=');
        const std::string_view key = arg.substr(0, eq);
        const std::string_view value = eq == std::string_view::npos ? std::string_view() : arg.substr(eq + 1);
        std::size_t n = 0;
        bool ok = eq != std::string_view::npos;
        if (key == "--help" || key == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (key == "--logger") {
            ok = ok && (value == "fieldlog" || value == "spdlog");
            o.logger = value;
        } else if (key == "--context") {
            ok = ok && (value == "scope" || value == "with");
            o.context = value == "with" ? RequestContext::with : RequestContext::scope;
        } else if (key == "--config") {
            o.config = value;
        } else if (key == "--log-file") {
            o.log_file = value;
        } else if (key == "--host") {
            o.service.host = value;
        } else if (key == "--port") {
            ok = ok && parse_count(value, n, 0) && n <= 65535;
            o.service.port = static_cast<int>(n);
        } else if (key == "--port-file") {
            o.port_file = value;
        } else if (key == "--threads") {
            ok = ok && parse_count(value, n, 1);
            o.service.connection_threads = n;
        } else if (key == "--otlp") {
            ok = ok && !value.empty();
            o.otlp = value;
        } else if (key == "--work-threads") {
            ok = ok && parse_count(value, n, 1);
            o.service.work_threads = n;
        } else {
            ok = false;
        }
        if (!ok) {
            std::fprintf(stderr, "fieldlog_http_service: bad option '%s'\n%s", argv[i], kUsage);
            return false;
        }
    }
    if (o.config.empty()) {
        const char* env = std::getenv("FIELDLOG_CONFIG");
        o.config = env != nullptr && *env != '\0' ? env : "examples/fieldlog.toml";
    }
    return true;
}

/// Written whole or not at all (rename), so a reader never sees a partial number.
void write_port_file(const std::string& path, int port) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << port << '\n';
    std::filesystem::rename(tmp, path);
}

const char* signal_name(int signo) {
    switch (signo) {
        case SIGTERM: return "SIGTERM";
        case SIGINT: return "SIGINT";
        case SIGHUP: return "SIGHUP";
        default: return "signal";
    }
}

}  // namespace

int main(int argc, char** argv) {
    mark_service_thread();
    Options options;
    if (!parse_options(argc, argv, options)) return 2;
    const bool use_fieldlog = options.logger == "fieldlog";

    // SIGTERM and SIGINT are taken by the signal thread below (sigwait), in every thread, because
    // a service drains before it flushes; fieldlog's own handlers keep SIGHUP (reload) and the
    // crash signals. spdlog has nothing to reload: there SIGHUP is taken and ignored.
    sigset_t taken;
    sigemptyset(&taken);
    sigaddset(&taken, SIGTERM);
    sigaddset(&taken, SIGINT);
    if (!use_fieldlog) sigaddset(&taken, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &taken, nullptr);  // before any thread starts: they inherit it

    std::unique_ptr<ServiceLog> log;
    try {
        if (use_fieldlog) {
            log = make_fieldlog_log(options.config, options.context, options.otlp);
            fieldlog::install_signal_handlers();
        } else {
            std::filesystem::path dir = std::filesystem::path(options.log_file).parent_path();
            if (!dir.empty()) std::filesystem::create_directories(dir);
            log = make_spdlog_log(options.log_file);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fieldlog_http_service: %s\n", e.what());
        return 1;
    }

    // Named only now: a thread takes the name of the thread that starts it, and the loggers'
    // threads, started above, must not look like the service's (load.sh tells them apart so).
    pthread_setname_np(pthread_self(), "http-main");
    Service service(options.service, *log);
    int port = 0;
    try {
        port = service.bind();
        if (!options.port_file.empty()) write_port_file(options.port_file, port);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fieldlog_http_service: %s\n", e.what());
        log->shutdown();
        return 1;
    }
    log->listening(options.service.host, port, options.service.connection_threads, options.service.work_threads);

    std::atomic<bool> done{false};
    std::thread signals([&] {
        mark_service_thread();
        pthread_setname_np(pthread_self(), "http-signals");
        const timespec poll{0, 200'000'000};
        while (!done.load()) {
            const int signo = sigtimedwait(&taken, nullptr, &poll);
            if (signo == SIGTERM || signo == SIGINT) {
                log->stopping(signal_name(signo));
                service.stop();
                return;
            }
        }
    });

    service.run();  // returns after stop(), with every request read answered and logged
    done.store(true);
    service.stop();  // when run() ended on its own (the socket failed)
    signals.join();
    service.drain();
    log->stopped(service.requests(), service.settled());
    log->shutdown();
    return 0;
}
