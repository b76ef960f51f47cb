// SPDX-License-Identifier: MIT
// Configuration: the TOML schema key by key, every rejected value with its exact message, the
// environment overrides and their precedence, and configure()/reload() leaving the running
// configuration alone when the new one is bad.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/test_support.hpp"

using fieldlog::Config;
using fieldlog::ConfigError;
using fieldlog::Level;
using fieldlog_test::options_of;
using fieldlog_test::read_lines;
using fieldlog_test::TempDir;
using namespace std::chrono_literals;

namespace {

using fieldlog_test::ScopedEnv;

/// No variable apply_env() reads leaks from the test's own environment into a case.
struct CleanEnv {
    ScopedEnv config{"FIELDLOG_CONFIG", std::nullopt};
    ScopedEnv level{"FIELDLOG_LEVEL", std::nullopt};
    ScopedEnv format{"FIELDLOG_FORMAT", std::nullopt};
    ScopedEnv resource{"OTEL_RESOURCE_ATTRIBUTES", std::nullopt};
    ScopedEnv service{"OTEL_SERVICE_NAME", std::nullopt};
};

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no ConfigError)";
}

/// Whether this build of fieldlog has named time zones (FIELDLOG_WITH_TZ).
bool named_zones() {
    try {
        fieldlog::TimeZone::named("Europe/Berlin");
        return true;
    } catch (const std::invalid_argument&) {
        return false;
    }
}

std::string parse_error(const std::string& text) {
    return error_of([&] { (void)Config::parse(text, "app.toml"); });
}

const fieldlog::FileSinkOptions& file_options(const fieldlog::SinkConfig& sink) {
    return options_of<fieldlog::FileSinkOptions>(sink.target);
}

std::string example_path() {
    return (std::filesystem::path(__FILE__).parent_path().parent_path() / "examples" / "fieldlog.toml").string();
}

}  // namespace

TEST_CASE("without any configuration records are JSON lines on stdout at level info", "[config]") {
    const CleanEnv clean;
    for (const Config& config : {Config{}, Config::parse(""), Config::from_env()}) {
        CHECK(config.level == Level::info);
        CHECK(config.levels.empty());
        CHECK(config.format == fieldlog::Format::json);
        CHECK(config.timestamp == fieldlog::TimestampFormat{});
        CHECK_FALSE(config.async.enabled);
        CHECK(config.sinks.empty());  // the default: one stdout sink (next test case)
    }
}

TEST_CASE("every key of the schema is read from TOML", "[config]") {
    const TempDir dir;
    const std::string log_path = dir.file("logs/app.log");
    const Config config = Config::parse(R"(
level = "warn"
format = "logfmt"
timestamp = "rfc3339micro"
timezone = "Europe/Berlin"
duration = "nanos"
redact = ["password", "*Token*"]
max_value_bytes = "1MiB"

[levels]
db = "debug"
"http.client" = "error"
cache.redis = "trace"

[async]
enabled = true
queue = "8MiB"
overflow = "drop"

[[sinks]]
type = "stderr"
format = "console"
level = "info"

[[sinks]]
type = "file"
path = ")" + log_path + R"("
max_size = "100MiB"
rotate = "hourly"
rotate_utc = true
keep = 9
max_age = "168h"
max_total_bytes = "2GiB"
compress = "gzip"
compression_level = 9
buffer = "16KiB"
flush_interval = "250ms"
flush_level = "warn"
fsync = true
reopen_check = "2s"

[[sinks]]
type = "udp"
address = "127.0.0.1:5140"
framing = "rfc5424"
max_datagram = 8192
oversize = "drop"
facility = 3
app_name = "checkout"
hostname = "web-1"
resolve_interval = "5m"

[[sinks]]
type = "null"
level = "fatal"

[[sinks]]
type = "stdout"

[[sinks]]
type = "journald"
socket = "/run/app/journal.sock"
identifier = "checkout"
format = "json"

[[sinks]]
type = "journald"
name = "journal"
)",
                                        "app.toml");
    CHECK(config.level == Level::warn);
    CHECK(config.format == fieldlog::Format::logfmt);
    CHECK(config.timestamp.precision == fieldlog::TimestampPrecision::micro);
    CHECK(config.timestamp.zone.name() == "Europe/Berlin");
    CHECK(config.duration == fieldlog::DurationFormat::nanos);
    CHECK(config.redact == std::vector<std::string>{"password", "*Token*"});
    CHECK(config.max_value_bytes == 1024 * 1024);
    CHECK(config.levels == std::map<std::string, Level, std::less<>>{
                               {"db", Level::debug}, {"http.client", Level::error}, {"cache.redis", Level::trace}});
    CHECK(config.async.enabled);
    CHECK(config.async.queue_bytes == 8 * 1024 * 1024);
    CHECK(config.async.overflow == fieldlog::OverflowPolicy::drop);
    CHECK(config.source.empty());  // parse() names no file; load() does
    REQUIRE(config.sinks.size() == 7);

    CHECK(options_of<fieldlog::StdoutSinkOptions>(config.sinks[0].target).stream == fieldlog::StdStream::err);
    CHECK(config.sinks[0].format == fieldlog::Format::console);
    CHECK(config.sinks[0].level == Level::info);
    CHECK(config.sinks[0].defined_at == "app.toml:20: sinks[0]");

    const fieldlog::FileSinkOptions& file = file_options(config.sinks[1]);
    CHECK(file.path == log_path);
    CHECK(file.max_size == 100ULL * 1024 * 1024);
    CHECK(file.rotate_every == fieldlog::RotateEvery::hour);
    CHECK(file.rotate_utc);
    CHECK(file.keep == 9);
    CHECK(file.max_age == 168h);
    CHECK(file.max_total_bytes == 2ULL * 1024 * 1024 * 1024);
    CHECK(file.compress == fieldlog::FileCompression::gzip);
    CHECK(file.compression_level == 9);
    CHECK(file.buffer_size == 16 * 1024);
    CHECK(file.flush_interval == 250ms);
    CHECK(file.flush_level == Level::warn);
    CHECK(file.fsync_on_flush);
    CHECK(file.reopen_check == 2s);
    CHECK_FALSE(config.sinks[1].format.has_value());
    CHECK(config.sinks[1].level == Level::trace);
    CHECK(config.sinks[1].defined_at == "app.toml:27: sinks[1].path");

    const auto& udp = options_of<fieldlog::UdpSinkOptions>(config.sinks[2].target);
    CHECK(udp.address == "127.0.0.1:5140");
    CHECK(udp.framing == fieldlog::UdpFraming::rfc5424);
    CHECK(udp.max_datagram == 8192);
    CHECK(udp.oversize == fieldlog::OversizePolicy::drop);
    CHECK(udp.facility == 3);
    CHECK(udp.app_name == "checkout");
    CHECK(udp.hostname == "web-1");
    CHECK(udp.resolve_interval == 5min);
    CHECK(config.sinks[2].defined_at == "app.toml:44: sinks[2].address");

    const auto& null = config.sinks[3].target.sink();
    CHECK(dynamic_cast<fieldlog::NullSink*>(null.get()) != nullptr);
    CHECK(config.sinks[3].level == Level::fatal);

    CHECK(options_of<fieldlog::StdoutSinkOptions>(config.sinks[4].target).stream == fieldlog::StdStream::out);

    const auto& journald = options_of<fieldlog::JournaldSinkOptions>(config.sinks[5].target);
    CHECK(journald.socket == "/run/app/journal.sock");
    CHECK(journald.identifier == "checkout");
    CHECK(config.sinks[5].format == fieldlog::Format::json);
    CHECK(config.sinks[5].defined_at == "app.toml:62: sinks[5].socket");
    CHECK(options_of<fieldlog::JournaldSinkOptions>(config.sinks[6].target) == fieldlog::JournaldSinkOptions{});
    CHECK(options_of<fieldlog::JournaldSinkOptions>(config.sinks[6].target).socket == "/run/systemd/journal/socket");
    CHECK(config.sinks[6].defined_at == "app.toml:66: sinks[6]");
    CHECK(config.sinks[6].name == "journal");
    CHECK(config.sinks[5].name.empty());  // configure() makes one up
}

TEST_CASE("a syslog sink reads every key, TLS files must be readable and go with transport tls", "[config][syslog]") {
    const TempDir dir;
    const std::string ca = dir.file("ca.pem");
    const std::string cert = dir.file("client.pem");
    const std::string key = dir.file("client.key");
    for (const std::string& path : {ca, cert, key}) std::ofstream(path) << "PEM\n";
    const Config config = Config::parse(R"([[sinks]]
type = "syslog"
address = "logs.example.net:6514"
transport = "tls"
ca_file = ")" + ca + R"("
cert_file = ")" + cert + R"("
key_file = ")" + key + R"("
verify = false
server_name = "collector"
buffer_bytes = "1MiB"
reconnect_max = "750ms"
drain_timeout = "3s"
facility = 4
app_name = "checkout"
hostname = "web-1"

[[sinks]]
type = "syslog"
address = "127.0.0.1:514"
)",
                                        "app.toml");
    REQUIRE(config.sinks.size() == 2);
    const auto& tls = options_of<fieldlog::SyslogSinkOptions>(config.sinks[0].target);
    CHECK(tls.address == "logs.example.net:6514");
    CHECK(tls.transport == fieldlog::SyslogTransport::tls);
    CHECK(tls.ca_file == ca);
    CHECK(tls.cert_file == cert);
    CHECK(tls.key_file == key);
    CHECK_FALSE(tls.verify);
    CHECK(tls.server_name == "collector");
    CHECK(tls.buffer_bytes == 1024 * 1024);
    CHECK(tls.reconnect_max == 750ms);
    CHECK(tls.drain_timeout == 3s);
    CHECK(tls.facility == 4);
    CHECK(tls.app_name == "checkout");
    CHECK(tls.hostname == "web-1");
    CHECK(config.sinks[0].defined_at == "app.toml:3: sinks[0].address");
    const auto& plain = options_of<fieldlog::SyslogSinkOptions>(config.sinks[1].target);
    CHECK(plain == fieldlog::SyslogSinkOptions{.address = "127.0.0.1:514"});
    CHECK(plain.verify);

    const std::string missing = dir.file("missing.pem");
    const std::pair<std::string, std::string> cases[] = {
        {"[[sinks]]\ntype = \"syslog\"", "app.toml:1: sinks[0]: missing key \"address\" (a syslog sink connects to \"host:port\")"},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\ntransport = \"udp\"",
         "app.toml:4: sinks[0].transport: expected tcp, tls, relp or relp-tls, got \"udp\""},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\ntransport = \"tls\"\nca_file = \"" + missing + "\"",
         "app.toml:5: sinks[0].ca_file: cannot read \"" + missing + "\": No such file or directory"},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\nca_file = \"" + ca + "\"",
         "app.toml:4: sinks[0].ca_file: only for transport = \"tls\" or \"relp-tls\""},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\ntransport = \"tls\"\ncert_file = \"" + cert + "\"",
         "app.toml:5: sinks[0].cert_file: needs both cert_file and key_file"},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\nbuffer_bytes = 100",
         "app.toml:4: sinks[0].buffer_bytes: expected a size of at least 4096 bytes, got 100"},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\nverify = \"yes\"",
         "app.toml:4: sinks[0].verify: expected true or false, got \"yes\""},
        {"[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\nframing = \"json\"",
         "app.toml:4: sinks[0].framing: unknown key for a syslog sink (known keys: type name format level caller tid timestamp "
         "color logger_width loggers exclude address transport ca_file cert_file key_file verify server_name buffer_bytes reconnect_max drain_timeout facility app_name "
         "hostname)"},
    };
    for (const auto& [text, message] : cases) {
        CAPTURE(text);  // not a section: the texts hold this run's temporary paths
        CHECK(parse_error(text) == message);
    }
}

TEST_CASE("a syslog sink over RELP: transport = \"relp\", TLS keys, a bad port or an unknown service are refused, naming the key",
          "[config][syslog]") {
    const CleanEnv clean;
    const Config config = Config::parse("[[sinks]]\ntype = \"syslog\"\naddress = \"127.0.0.1:2514\"\ntransport = \"relp\"\n");
    REQUIRE(config.sinks.size() == 1);
    CHECK(options_of<fieldlog::SyslogSinkOptions>(config.sinks[0].target).transport == fieldlog::SyslogTransport::relp);
    CHECK(parse_error("[[sinks]]\ntype = \"syslog\"\naddress = \"x:1\"\ntransport = \"relp\"\nverify = false") ==
          "app.toml:5: sinks[0].verify: only for transport = \"tls\" or \"relp-tls\"");
    const auto relp_at = [](const std::string& address) {
        return Config::parse("[[sinks]]\ntype = \"syslog\"\ntransport = \"relp\"\naddress = \"" + address + "\"\n", "app.toml");
    };
    CHECK(error_of([&] { fieldlog::configure(relp_at("127.0.0.1:99999")); }) ==
          "app.toml:4: sinks[0].address: address '127.0.0.1:99999': port 99999 is not in 1-65535");
    CHECK_THAT(error_of([&] { fieldlog::configure(relp_at("127.0.0.1:no-such-service")); }),
               Catch::StartsWith("app.toml:4: sinks[0].address: cannot resolve '127.0.0.1:no-such-service': "));
    CHECK(parse_error("[[sinks]]\ntype = \"syslog\"\ntransport = \"relp\"\naddress = \"localhost\"") ==
          "app.toml:4: sinks[0].address: expected an address like \"127.0.0.1:6514\", got \"localhost\"");
}

TEST_CASE("a syslog sink over RELP inside TLS: transport = \"relp-tls\" takes the TLS keys", "[config][syslog]") {
    const CleanEnv clean;
    const TempDir dir;
    const std::string ca = dir.file("ca.pem");
    const std::string cert = dir.file("client.pem");
    const std::string key = dir.file("client.key");
    for (const std::string& path : {ca, cert, key}) std::ofstream(path) << "PEM\n";
    const Config config = Config::parse("[[sinks]]\ntype = \"syslog\"\naddress = \"127.0.0.1:2514\"\ntransport = \"relp-tls\"\n"
                                        "ca_file = \"" + ca + "\"\ncert_file = \"" + cert + "\"\nkey_file = \"" + key +
                                        "\"\nverify = false\nserver_name = \"collector\"\n");
    REQUIRE(config.sinks.size() == 1);
    const auto& relp_tls = options_of<fieldlog::SyslogSinkOptions>(config.sinks[0].target);
    CHECK(relp_tls.transport == fieldlog::SyslogTransport::relp_tls);
    CHECK(relp_tls.ca_file == ca);
    CHECK(relp_tls.cert_file == cert);
    CHECK(relp_tls.key_file == key);
    CHECK_FALSE(relp_tls.verify);
    CHECK(relp_tls.server_name == "collector");
}

TEST_CASE("no sinks means one stdout sink, so a sink added in code is the only one", "[config]") {
    const auto running_kinds = [] {
        std::vector<std::string> kinds;
        for (const fieldlog::SinkMetrics& sink : fieldlog::metrics().sinks) kinds.push_back(sink.kind);
        return kinds;
    };
    fieldlog::configure(Config{.level = Level::off});
    CHECK(running_kinds() == std::vector<std::string>{"stdout"});
    fieldlog::configure(Config::parse("level = \"off\""));  // a file without [[sinks]]
    CHECK(running_kinds() == std::vector<std::string>{"stdout"});

    Config config;
    config.sinks.push_back({.target = std::make_shared<fieldlog::MemorySink>()});
    fieldlog::configure(config);
    CHECK(running_kinds() == std::vector<std::string>{"memory"});
    fieldlog_test::release_sinks();

    CHECK(parse_error("sinks = []") ==
          "app.toml:1: sinks: an empty list (leave it out for one stdout sink, or discard records with a sink of type "
          "\"null\")");
}

TEST_CASE("the timestamp and timezone keys take every documented value", "[config]") {
    const std::pair<const char*, fieldlog::TimestampPrecision> precisions[] = {
        {"rfc3339nano", fieldlog::TimestampPrecision::nano},
        {"rfc3339nano-trimmed", fieldlog::TimestampPrecision::nano_trimmed},
        {"rfc3339micro", fieldlog::TimestampPrecision::micro},
        {"rfc3339milli", fieldlog::TimestampPrecision::milli},
        {"rfc3339", fieldlog::TimestampPrecision::seconds},
        {"unix_nanos", fieldlog::TimestampPrecision::unix_nanos},
        {"unix_seconds_float", fieldlog::TimestampPrecision::unix_seconds_float},
        {"short", fieldlog::TimestampPrecision::short_time},
    };
    for (const auto& [name, precision] : precisions) {
        DYNAMIC_SECTION("timestamp = " << name) {
            CHECK(Config::parse(std::string("timestamp = \"") + name + "\"").timestamp.precision == precision);
        }
    }
    SECTION("timezone = UTC") { CHECK(Config::parse("timezone = \"UTC\"").timestamp.zone.is_utc()); }
    SECTION("timezone = local") {
        const ScopedEnv tz("TZ", "Asia/Tokyo");
        CHECK(Config::parse("timezone = \"local\"").timestamp.zone.name() == "Asia/Tokyo");
    }
    SECTION("timezone = an IANA name") {
        CHECK(Config::parse("timezone = \"America/New_York\"").timestamp.zone.name() == "America/New_York");
    }
}

TEST_CASE("a sink's own console keys are read from TOML, and absent ones leave the defaults", "[config]") {
    const Config config = Config::parse(R"(
timestamp = "rfc3339milli"
[[sinks]]
type = "stdout"
format = "console"
timestamp = "short"
color = "always"
logger_width = 20
[[sinks]]
type = "stderr"
color = "never"
logger_width = 0
[[sinks]]
type = "null"
color = "auto"
)");
    REQUIRE(config.sinks.size() == 3);
    CHECK(config.sinks[0].timestamp == fieldlog::TimestampPrecision::short_time);
    CHECK(config.sinks[0].colour == fieldlog::ColourMode::always);
    CHECK(config.sinks[0].logger_width == 20);
    CHECK_FALSE(config.sinks[1].timestamp.has_value());
    CHECK(config.sinks[1].colour == fieldlog::ColourMode::never);
    CHECK(config.sinks[1].logger_width == 0);
    CHECK(config.sinks[2].colour == fieldlog::ColourMode::automatic);
    CHECK(config.sinks[2].logger_width == fieldlog::default_logger_width);
    CHECK(parse_error("[[sinks]]\ntype = \"stdout\"\ncolor = \"yes\"") ==
          "app.toml:3: sinks[0].color: expected auto, always or never, got \"yes\"");
    CHECK(parse_error("[[sinks]]\ntype = \"stdout\"\ncolour = \"auto\"") ==
          "app.toml:3: sinks[0].colour: unknown key for a stdout sink (did you mean \"color\"?)");
    CHECK(parse_error("[[sinks]]\ntype = \"stdout\"\nlogger_width = 65") ==
          "app.toml:3: sinks[0].logger_width: expected a column width from 0 to 64, got 65");
    CHECK(parse_error("[[sinks]]\ntype = \"stdout\"\nlogger_width = \"12\"") ==
          "app.toml:3: sinks[0].logger_width: expected a column width from 0 to 64, got \"12\"");
    CHECK(parse_error("[[sinks]]\ntype = \"stdout\"\ntimestamp = \"time\"") ==
          "app.toml:3: sinks[0].timestamp: expected rfc3339nano, rfc3339nano-trimmed, rfc3339micro, rfc3339milli, "
          "rfc3339, unix_nanos, unix_seconds_float or short, got \"time\"");
}

TEST_CASE("the duration key takes every documented value", "[config]") {
    CHECK(Config::parse("duration = \"string\"").duration == fieldlog::DurationFormat::string);
    CHECK(Config::parse("duration = \"string-ascii\"").duration == fieldlog::DurationFormat::string_ascii);
    CHECK(Config::parse("duration = \"nanos\"").duration == fieldlog::DurationFormat::nanos);
    CHECK(Config::parse("duration = \"seconds\"").duration == fieldlog::DurationFormat::seconds);
}

TEST_CASE("sizes are whole bytes, with or without a unit", "[config]") {
    const std::pair<const char*, std::size_t> good[] = {
        {"4096", 4096},           {"\"512\"", 512},         {"\"512B\"", 512},
        {"\"64KiB\"", 65536},     {"\"4MiB\"", 4194304},    {"\"1GiB\"", 1073741824},
        {"\"10KB\"", 10000},      {"\"10kB\"", 10000},      {"\"100MB\"", 100000000},
        {"\"2GB\"", 2000000000},  {"\"1TiB\"", 1ULL << 40}, {"\"3 MiB\"", 3 * 1048576},
    };
    for (const auto& [text, bytes] : good) {
        DYNAMIC_SECTION("queue = " << text) {
            CHECK(Config::parse(std::string("[async]\nqueue = ") + text).async.queue_bytes == bytes);
        }
    }
    const char* bad[] = {"\"lots\"", "\"1.5MiB\"", "\"-1\"", "-1", "\"4mib\"", "\"MiB\"", "\"\"",
                         "\"99999999999999999999\"", "\"20000000TiB\"", "1.5", "true"};
    for (const char* text : bad) {
        DYNAMIC_SECTION("queue = " << text << " is rejected") {
            const std::string error = parse_error(std::string("[async]\nqueue = ") + text);
            CHECK(error.starts_with("app.toml:2: async.queue: expected a size like \"4MiB\", got "));
        }
    }
    CHECK(parse_error("[async]\nqueue = 0") == "app.toml:2: async.queue: expected a size of at least 1 byte, got 0");
}

TEST_CASE("durations are written the way Go writes them", "[config]") {
    const TempDir dir;
    const std::string head = "[[sinks]]\ntype = \"file\"\npath = \"" + dir.file("a.log") + "\"\nflush_interval = ";
    const std::pair<const char*, std::chrono::milliseconds> good[] = {
        {"500ms", 500ms},  {"2s", 2s},      {"1m30s", 90s},         {"1.5s", 1500ms},     {"1h", 1h},
        {"0", 0ms},        {"250000us", 250ms}, {"7000000ns", 7ms}, {"0.25m", 15s},       {"1h1m1s1ms", 3661001ms},
        {"2000\u00b5s", 2ms},
    };
    for (const auto& [text, duration] : good) {
        DYNAMIC_SECTION("flush_interval = " << text) {
            const Config config = Config::parse(head + "\"" + text + "\"");
            CHECK(file_options(config.sinks[0]).flush_interval == duration);
        }
    }
    const char* bad[] = {"\"soon\"", "\"5\"", "\"1.5\"", "\"-1s\"", "\"ms\"", "\"1d\"", "\"\"", "\".s\"", "500",
                         "\"9999999999h\""};
    for (const char* text : bad) {
        DYNAMIC_SECTION("flush_interval = " << text << " is rejected") {
            CHECK(parse_error(head + text) ==
                  std::string("app.toml:4: sinks[0].flush_interval: expected a duration like \"1s\", got ") + text);
        }
    }
    CHECK(parse_error(head + "\"250us\"") ==
          "app.toml:4: sinks[0].flush_interval: expected a duration in whole milliseconds like \"1s\", got \"250us\"");
}

TEST_CASE("every rejected key names the file, the line and the key", "[config]") {
    struct Case {
        const char* text;
        const char* message;
    };
    const Case cases[] = {
        {"colour = true",
         "app.toml:1: colour: unknown key (known keys: level levels sampling backtraces format timestamp timezone duration caller tid crash_handlers async resource redact max_value_bytes sinks)"},
        {"\n\nlevle = \"info\"", "app.toml:3: levle: unknown key (did you mean \"level\"?)"},
        {"level = 3", "app.toml:1: level: expected trace, debug, info, warn, error, fatal or off, got 3"},
        {"level = \"verbose\"",
         "app.toml:1: level: expected trace, debug, info, warn, error, fatal or off, got \"verbose\""},
        {"levels = \"debug\"", "app.toml:1: levels: expected a table of logger = \"level\", got \"debug\""},
        {"[levels]\ndb = \"loud\"",
         "app.toml:2: levels.db: expected trace, debug, info, warn, error, fatal or off, got \"loud\""},
        {"[levels]\n\ndb.pool = 4",
         "app.toml:3: levels.db.pool: expected trace, debug, info, warn, error, fatal or off, got 4"},
        {"format = \"xml\"", "app.toml:1: format: expected json, logfmt, console or otel, got \"xml\""},
        {"timestamp = \"iso8601\"",
         "app.toml:1: timestamp: expected rfc3339nano, rfc3339nano-trimmed, rfc3339micro, rfc3339milli, rfc3339, "
         "unix_nanos, unix_seconds_float or short, got \"iso8601\""},
        {"timezone = 1", "app.toml:1: timezone: expected \"UTC\", \"local\" or an IANA zone name like "
                         "\"Europe/Berlin\", got 1"},
        {"duration = \"minutes\"", "app.toml:1: duration: expected string, string-ascii, nanos or seconds, got \"minutes\""},
        {"async = true", "app.toml:1: async: expected a table ([async]), got true"},
        {"[async]\nenabled = \"yes\"", "app.toml:2: async.enabled: expected true or false, got \"yes\""},
        {"[async]\noverflow = \"wait\"", "app.toml:2: async.overflow: expected block or drop, got \"wait\""},
        {"[async]\nqueue = \"lots\"", "app.toml:2: async.queue: expected a size like \"4MiB\", got \"lots\""},
        {"[async]\nqeueu = 1", "app.toml:2: async.qeueu: unknown key (did you mean \"queue\"?)"},
        {"sinks = \"stdout\"", "app.toml:1: sinks: expected [[sinks]] tables, got \"stdout\""},
        {"sinks = [1]", "app.toml:1: sinks[0]: expected a table ([[sinks]]), got 1"},
        {"[[sinks]]\nformat = \"json\"",
         "app.toml:1: sinks[0]: missing key \"type\" (stdout, stderr, file, udp, journald, syslog, null or otlp)"},
        {"[[sinks]]\ntype = \"kafka\"",
         "app.toml:2: sinks[0].type: expected stdout, stderr, file, udp, journald, syslog, null or otlp, got \"kafka\""},
        {"[[sinks]]\ntype = \"stdout\"\npath = \"x.log\"",
         "app.toml:3: sinks[0].path: unknown key for a stdout sink (known keys: type name format level caller tid timestamp color logger_width loggers exclude)"},
        {"[[sinks]]\ntype = \"null\"\nlevel = \"loud\"",
         "app.toml:3: sinks[0].level: expected trace, debug, info, warn, error, fatal or off, got \"loud\""},
        {"[[sinks]]\ntype = \"stderr\"\nformat = \"yaml\"",
         "app.toml:3: sinks[0].format: expected json, logfmt, console or otel, got \"yaml\""},
        {"[[sinks]]\ntype = \"file\"", "app.toml:1: sinks[0]: missing key \"path\" (a file sink writes to a file)"},
        {"[[sinks]]\ntype = \"file\"\npath = \"\"", "app.toml:3: sinks[0].path: expected a file path, got \"\""},
        {"[[sinks]]\ntype = \"file\"\npath = 5", "app.toml:3: sinks[0].path: expected a file path, got 5"},
        {"[[sinks]]\ntype = \"file\"\nmax_sise = \"1MiB\"",
         "app.toml:3: sinks[0].max_sise: unknown key for a file sink (did you mean \"max_size\"?)"},
        {"[[sinks]]\ntype = \"stdout\"\n[[sinks]]\ntype = \"file\"\npath = \"app.log\"\n\nmax_size = \"lots\"",
         "app.toml:7: sinks[1].max_size: expected a size like \"100MiB\", got \"lots\""},
        {"[[sinks]]\ntype = \"file\"\nrotate = \"weekly\"",
         "app.toml:3: sinks[0].rotate: expected never, hourly or daily, got \"weekly\""},
        {"[[sinks]]\ntype = \"file\"\nrotate_utc = \"yes\"",
         "app.toml:3: sinks[0].rotate_utc: expected true or false, got \"yes\""},
        {"[[sinks]]\ntype = \"file\"\nkeep = -1", "app.toml:3: sinks[0].keep: expected a number of files from 0 to 4294967295, got -1"},
        {"[[sinks]]\ntype = \"file\"\nkeep = \"5\"",
         "app.toml:3: sinks[0].keep: expected a number of files from 0 to 4294967295, got \"5\""},
        {"[[sinks]]\ntype = \"file\"\nfsync = 1", "app.toml:3: sinks[0].fsync: expected true or false, got 1"},
        {"[[sinks]]\ntype = \"file\"\ncompress = \"zstd\"", "app.toml:3: sinks[0].compress: expected none or gzip, got \"zstd\""},
        {"[[sinks]]\ntype = \"file\"\ncompression_level = 10",
         "app.toml:3: sinks[0].compression_level: expected a zlib level (1 fastest, 9 smallest) from 1 to 9, got 10"},
        {"[[sinks]]\ntype = \"file\"\nmax_age = \"7d\"", "app.toml:3: sinks[0].max_age: expected a duration like \"168h\", got \"7d\""},
        {"[[sinks]]\ntype = \"file\"\nmax_age = \"1.5s\"",
         "app.toml:3: sinks[0].max_age: expected a duration in whole seconds like \"168h\", got \"1.5s\""},
        {"[[sinks]]\ntype = \"file\"\nmax_total_bytes = \"all\"",
         "app.toml:3: sinks[0].max_total_bytes: expected a size like \"1GiB\", got \"all\""},
        {"[[sinks]]\ntype = \"file\"\nbuffer = \"big\"", "app.toml:3: sinks[0].buffer: expected a size like \"64KiB\", got \"big\""},
        {"[[sinks]]\ntype = \"file\"\nflush_level = \"now\"",
         "app.toml:3: sinks[0].flush_level: expected trace, debug, info, warn, error, fatal or off, got \"now\""},
        {"[[sinks]]\ntype = \"file\"\nreopen_check = 1",
         "app.toml:3: sinks[0].reopen_check: expected a duration like \"1s\", got 1"},
        {"[[sinks]]\ntype = \"udp\"", "app.toml:1: sinks[0]: missing key \"address\" (a udp sink sends to \"host:port\")"},
        {"[[sinks]]\ntype = \"udp\"\naddress = \"localhost\"",
         "app.toml:3: sinks[0].address: expected an address like \"127.0.0.1:5140\", got \"localhost\""},
        {"[[sinks]]\ntype = \"udp\"\nframing = \"gelf\"",
         "app.toml:3: sinks[0].framing: expected json or rfc5424, got \"gelf\""},
        {"[[sinks]]\ntype = \"udp\"\nmax_datagram = 70000",
         "app.toml:3: sinks[0].max_datagram: expected a size from 1 to 65507 bytes, got 70000"},
        {"[[sinks]]\ntype = \"udp\"\noversize = \"split\"",
         "app.toml:3: sinks[0].oversize: expected truncate or drop, got \"split\""},
        {"[[sinks]]\ntype = \"udp\"\nfacility = 24",
         "app.toml:3: sinks[0].facility: expected a syslog facility from 0 to 23, got 24"},
        {"[[sinks]]\ntype = \"udp\"\napp_name = false", "app.toml:3: sinks[0].app_name: expected a name, got false"},
        {"[[sinks]]\ntype = \"udp\"\nhostname = []", "app.toml:3: sinks[0].hostname: expected a host name, got an array"},
        {"[[sinks]]\ntype = \"udp\"\nresolve_interval = \"1500ms\"",
         "app.toml:3: sinks[0].resolve_interval: expected a duration in whole seconds like \"60s\", got \"1500ms\""},
        {"[[sinks]]\ntype = \"udp\"\npath = \"x\"",
         "app.toml:3: sinks[0].path: unknown key for a udp sink (known keys: type name format level caller tid timestamp color logger_width loggers exclude address framing "
         "max_datagram oversize facility app_name hostname resolve_interval)"},
        {"[[sinks]]\ntype = \"journald\"\nsocket = \"\"",
         "app.toml:3: sinks[0].socket: expected a socket path like \"/run/systemd/journal/socket\", got \"\""},
        {"[[sinks]]\ntype = \"journald\"\nsocket = 1",
         "app.toml:3: sinks[0].socket: expected a socket path like \"/run/systemd/journal/socket\", got 1"},
        {"[[sinks]]\ntype = \"journald\"\nidentifier = 7", "app.toml:3: sinks[0].identifier: expected a name, got 7"},
        {"[[sinks]]\ntype = \"journald\"\nformat = \"logfmt\"",
         "app.toml:3: sinks[0].format: expected json (a journald sink writes values as JSON does), got "
         "\"logfmt\""},
        {"[[sinks]]\ntype = \"journald\"\nidentifer = \"app\"",
         "app.toml:3: sinks[0].identifer: unknown key for a journald sink (did you mean \"identifier\"?)"},
        {"[[sinks]]\ntype = \"stdout\"\nname = \"\"", "app.toml:3: sinks[0].name: expected a name like \"audit\", got \"\""},
        {"[[sinks]]\ntype = \"null\"\nname = 3", "app.toml:3: sinks[0].name: expected a name like \"audit\", got 3"},
        {"[[sinks]]\ntype = \"journald\"\naddress = \"127.0.0.1:5140\"",
         "app.toml:3: sinks[0].address: unknown key for a journald sink (known keys: type name format level caller tid timestamp color logger_width loggers exclude socket "
         "identifier when_full wait_timeout)"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.message) { CHECK(parse_error(c.text) == c.message); }
    }
    // A zone that is not there; a build without named zones refuses every name, saying how to rebuild.
    const std::string unknown_zone = parse_error("timezone = \"Mars/Olympus_Mons\"");
    if (named_zones()) {
        CHECK(unknown_zone == "app.toml:1: timezone: expected \"UTC\", \"local\" or an IANA zone name like "
                              "\"Europe/Berlin\", got \"Mars/Olympus_Mons\"");
    } else {
        CHECK_THAT(unknown_zone, Catch::StartsWith("app.toml:1: timezone: ") &&
                                     Catch::Contains("rebuild with -DFIELDLOG_WITH_TZ=ON"));
    }
    const std::string long_socket = "/" + std::string(107, 's');  // 108 bytes: one more than sockaddr_un holds
    CHECK(parse_error("[[sinks]]\ntype = \"journald\"\nsocket = \"" + long_socket + "\"") ==
          "app.toml:3: sinks[0].socket: expected a socket path of at most 107 bytes, got \"" + long_socket + "\"");
}

TEST_CASE("a TOML syntax error says what is wrong in plain words, then the parser's own, at file:line:column", "[config]") {
    struct Case {
        const char* text;
        const char* message;
    };
    const Case cases[] = {
        {"level = \"info\"\nformat = \"json\n",
         "app.toml:2:15: unterminated string (the closing \" is missing on this line) (Error while parsing string: "
         "unescaped control characters other than TAB (U+0009) are explicitly prohibited)"},
        {"format = 'json\n",
         "app.toml:1:15: unterminated string (the closing ' is missing on this line) (Error while parsing literal "
         "string: control characters other than TAB (U+0009) are explicitly prohibited)"},
        {"format = \"\"\"json\n",
         "app.toml:1:18: unterminated string (its closing quotes are missing) (Error while parsing string: encountered "
         "end-of-file)"},
        {"format \"json\"\n",
         "app.toml:1:8: missing '=' after the key (Error while parsing key-value pair: expected '=', saw '\"')"},
        {"[async]\nenabled\n",
         "app.toml:2:8: missing '=' after the key (Error while parsing key-value pair: expected '=', saw '\\n')"},
        {"level = \"info\"\nformat = \n",
         "app.toml:2:10: missing value after '=' (Error while parsing key-value pair: expected value, saw '\\n')"},
        {"level = \"info\"\nlevel = \"debug\"\n",
         "app.toml:2:9: duplicate key \"level\" (it is set earlier in this table) (Error while parsing key-value pair: "
         "cannot redefine existing string 'level')"},
        {"[async]\nenabled = true\n[async]\n",
         "app.toml:3:1: duplicate table [async] (a table header may appear once) (Error while parsing table header: "
         "cannot redefine existing table 'async')"},
        {"[async\nenabled = true\n",
         "app.toml:1:7: unterminated table header (the closing ] is missing) (Error while parsing table header: "
         "expected ']', saw '\\n')"},
        {"[[sinks]\ntype = \"stdout\"\n",
         "app.toml:1:9: unterminated table header (the closing ]] is missing) (Error while parsing table header: "
         "expected ']', saw '\\n')"},
        {"[levels]\nlist = [\"db\", \"http\"\nlevel = \"info\"\n",
         "app.toml:3:1: unterminated array (a ',' between values or the closing ] is missing) (Error while parsing "
         "array: expected comma or closing ']', saw 'l')"},
        {"format = \"js\\qon\"\n",
         "app.toml:1:14: bad escape sequence in a string (write \\\\ for a backslash, or use 'single quotes') (Error "
         "while parsing string: unknown escape sequence '\\q')"},
        // Not told apart: the parser's words alone, still at file:line:column.
        {"level = info\n", "app.toml:1:12: Error while parsing floating-point: expected value-terminator, saw 'o'"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.text) { CHECK(parse_error(c.text) == c.message); }
    }
}

TEST_CASE("a file sink whose path cannot be written is rejected when parsed", "[config]") {
    const TempDir dir;
    write_file(dir.file("plain"), "not a directory\n");
    std::filesystem::create_directories(dir.file("a_directory"));
    const auto sink_at = [](const std::string& path) {
        return "[[sinks]]\ntype = \"file\"\npath = \"" + path + "\"";
    };
    CHECK(parse_error(sink_at(dir.file("plain/app.log"))) ==
          "app.toml:3: sinks[0].path: cannot open \"" + dir.file("plain/app.log") + "\" for writing: Not a directory");
    CHECK(parse_error(sink_at(dir.file("plain/deeper/app.log"))) ==
          "app.toml:3: sinks[0].path: cannot open \"" + dir.file("plain/deeper/app.log") +
              "\" for writing: Not a directory");
    CHECK(parse_error(sink_at(dir.file("a_directory"))) ==
          "app.toml:3: sinks[0].path: cannot open \"" + dir.file("a_directory") + "\" for writing: Is a directory");
    // Missing directories are fine: the sink creates them.
    CHECK(file_options(Config::parse(sink_at(dir.file("new/dirs/app.log"))).sinks[0]).path ==
          dir.file("new/dirs/app.log"));
    CHECK_FALSE(std::filesystem::exists(dir.file("new")));  // parsing creates nothing
}

TEST_CASE("load() reads a file and names it in errors", "[config]") {
    const CleanEnv clean;
    const TempDir dir;
    const std::string path = dir.file("fieldlog.toml");
    write_file(path, "level = \"error\"\n\n[[sinks]]\ntype = \"null\"\n");
    const Config config = Config::load(path);
    CHECK(config.level == Level::error);
    CHECK(config.source == path);

    write_file(path, "level = \"error\"\n\n[[sinks]]\ntype = \"nul\"\n");
    CHECK(error_of([&] { (void)Config::load(path); }) ==
          path + ":4: sinks[0].type: expected stdout, stderr, file, udp, journald, syslog, null or otlp, got \"nul\"");
    CHECK(error_of([&] { (void)Config::load(dir.file("missing.toml")); }) ==
          dir.file("missing.toml") + ": cannot read the configuration file: No such file or directory");
}

TEST_CASE("the environment overrides the file, which overrides the code defaults", "[config][env]") {
    const CleanEnv clean;
    const TempDir dir;
    const std::string path = dir.file("fieldlog.toml");
    write_file(path,
               "level = \"debug\"\nformat = \"logfmt\"\n[levels]\ndb = \"trace\"\ncache = \"warn\"\n"
               "[[sinks]]\ntype = \"stdout\"\n[[sinks]]\ntype = \"stderr\"\nformat = \"json\"\n");

    SECTION("the file alone") {
        const Config config = Config::load(path);
        CHECK(config.level == Level::debug);
        CHECK(config.format == fieldlog::Format::logfmt);
        CHECK(config.levels.at("db") == Level::trace);
    }
    SECTION("a bare level in FIELDLOG_LEVEL sets every logger: the file's per-logger levels go, its own entries stay") {
        const ScopedEnv level("FIELDLOG_LEVEL", "error, db=info ,http.client = warn,,");
        const Config config = Config::load(path);
        CHECK(config.level == Level::error);
        CHECK(config.levels ==
              std::map<std::string, Level, std::less<>>{{"db", Level::info}, {"http.client", Level::warn}});
    }
    SECTION("FIELDLOG_LEVEL=trace wins over a file that sets a logger's level") {
        const ScopedEnv level("FIELDLOG_LEVEL", "TRACE");  // any case
        const Config config = Config::load(path);
        CHECK(config.level == Level::trace);
        CHECK(config.levels.empty());
        fieldlog::configure(config);  // stdout and stderr sinks: nothing is logged to them
        CHECK(fieldlog::get("db").level() == Level::trace);
        CHECK(fieldlog::get("cache").level() == Level::trace);
        fieldlog_test::release_sinks();
    }
    SECTION("FIELDLOG_LEVEL with logger levels only keeps the file's global level") {
        const ScopedEnv level("FIELDLOG_LEVEL", "db=off");
        const Config config = Config::load(path);
        CHECK(config.level == Level::debug);
        CHECK(config.levels.at("db") == Level::off);
    }
    SECTION("FIELDLOG_FORMAT changes the default format, not a sink's own") {
        const ScopedEnv format("FIELDLOG_FORMAT", "console");
        const Config config = Config::load(path);
        CHECK(config.format == fieldlog::Format::console);
        CHECK_FALSE(config.sinks[0].format.has_value());
        CHECK(config.sinks[1].format == fieldlog::Format::json);
    }
    SECTION("FIELDLOG_CONFIG names the file from_env() reads, under the other variables") {
        const ScopedEnv file("FIELDLOG_CONFIG", path);
        const ScopedEnv format("FIELDLOG_FORMAT", "json");
        const Config config = Config::from_env();
        CHECK(config.level == Level::debug);
        CHECK(config.format == fieldlog::Format::json);
        CHECK(config.source == path);
        CHECK(config.sinks.size() == 2);
    }
    SECTION("without FIELDLOG_CONFIG, from_env() starts from the code defaults") {
        const ScopedEnv level("FIELDLOG_LEVEL", "warn");
        const Config config = Config::from_env();
        CHECK(config.level == Level::warn);
        CHECK(config.format == fieldlog::Format::json);
        CHECK(config.sinks.empty());  // one stdout sink
    }
    SECTION("apply_env() layers the environment over a configuration made in code") {
        const ScopedEnv level("FIELDLOG_LEVEL", "trace");
        Config config{.level = Level::error, .format = fieldlog::Format::logfmt};
        config.apply_env();
        CHECK(config.level == Level::trace);
        CHECK(config.format == fieldlog::Format::logfmt);
    }
}

TEST_CASE("a bad environment variable is rejected with its name and key", "[config][env]") {
    const CleanEnv clean;
    struct Case {
        const char* name;
        const char* value;
        const char* message;
    };
    const Case cases[] = {
        {"FIELDLOG_LEVEL", "loud",
         "FIELDLOG_LEVEL: level: expected trace, debug, info, warn, error, fatal or off, got \"loud\""},
        {"FIELDLOG_LEVEL", "info,db=loud",
         "FIELDLOG_LEVEL: levels.db: expected trace, debug, info, warn, error, fatal or off, got \"loud\""},
        {"FIELDLOG_LEVEL", "info,db=", "FIELDLOG_LEVEL: levels.db: expected trace, debug, info, warn, error, fatal or off, got \"\""},
        {"FIELDLOG_LEVEL", "=debug", "FIELDLOG_LEVEL: \"=debug\": expected a logger name before '='"},
        {"FIELDLOG_FORMAT", "xml", "FIELDLOG_FORMAT: format: expected json, logfmt, console or otel, got \"xml\""},
        {"FIELDLOG_CONFIG", "/nonexistent/fieldlog.toml",
         "/nonexistent/fieldlog.toml: cannot read the configuration file: No such file or directory"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name << "=" << c.value) {
            const ScopedEnv variable(c.name, c.value);
            CHECK(error_of([] { (void)Config::from_env(); }) == c.message);
        }
    }
    SECTION("a bad entry changes nothing") {
        const ScopedEnv variable("FIELDLOG_LEVEL", "debug,db=loud");
        Config config;
        CHECK_THROWS_AS(config.apply_env(), ConfigError);
        CHECK(config.level == Level::info);
        CHECK(config.levels.empty());
    }
}

TEST_CASE("configure() with a sink it cannot make throws and keeps the running configuration", "[config]") {
    const TempDir dir;
    write_file(dir.file("plain"), "x");
    auto running = std::make_shared<fieldlog::MemorySink>();
    auto rejected = std::make_shared<fieldlog::MemorySink>();
    fieldlog::configure({.level = Level::info, .sinks = {{.target = running}}});
    const fieldlog::Logger log = fieldlog::get("config.keep");
    log.info("before");

    const std::string bad_path = dir.file("plain/app.log");
    const Config bad{.level = Level::error,
                     .sinks = {{.target = rejected}, {.target = fieldlog::FileSinkOptions{.path = bad_path}}}};
    CHECK(error_of([&] { fieldlog::configure(bad); }) ==
          "sinks[1]: cannot open \"" + bad_path + "\" for writing: Not a directory");

    log.info("after");  // still at level info, still to the running sink
    CHECK(log.level() == Level::info);
    const auto lines = running->lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[1].find("\"msg\":\"after\"") != std::string::npos);
    CHECK(rejected->lines().empty());

    SECTION("a sink from a file names the file, line and key") {
        // Reachable when parsed, gone by the time configure() opens it.
        std::filesystem::create_directories(dir.file("gone"));
        Config from_file = Config::parse("\n[[sinks]]\ntype = \"file\"\npath = \"" + dir.file("gone/app.log") + "\"\n",
                                         "fieldlog.toml");
        std::filesystem::remove(dir.file("gone"));
        write_file(dir.file("gone"), "now a file");
        CHECK(error_of([&] { fieldlog::configure(from_file); }) ==
              "fieldlog.toml:4: sinks[0].path: cannot open \"" + dir.file("gone/app.log") +
                  "\" for writing: Not a directory");
        log.info("still");
        CHECK(running->lines().size() == 3);
    }
    SECTION("an address that does not resolve") {
        // A service name no /etc/services knows fails without asking DNS.
        const Config unresolvable{
            .sinks = {{.target = fieldlog::UdpSinkOptions{.address = "127.0.0.1:no-such-service"}}}};
        const std::string error = error_of([&] { fieldlog::configure(unresolvable); });
        CHECK(error.starts_with("sinks[0]: "));
        log.info("still");
        CHECK(running->lines().size() == 3);
    }
}

TEST_CASE("a UDP port outside 1-65535 is refused, naming the key, in the file and in code", "[config]") {
    const CleanEnv clean;
    for (const std::string port : {"99999", "65536", "0", "00", "1234567"}) {
        DYNAMIC_SECTION("port " << port) {
            const std::string problem = "address '127.0.0.1:" + port + "': port " + port + " is not in 1-65535";
            CHECK(parse_error("[[sinks]]\ntype = \"udp\"\naddress = \"127.0.0.1:" + port + "\"\n") ==
                  "app.toml:3: sinks[0].address: " + problem);
            CHECK(error_of([&] {
                      fieldlog::configure({.sinks = {{.target = fieldlog::UdpSinkOptions{.address = "127.0.0.1:" + port}}}});
                  }) == "sinks[0]: " + problem);
        }
    }
    SECTION("the ends of the range are taken") {
        for (const std::string port : {"1", "65535"}) {
            CHECK_NOTHROW(fieldlog::configure(
                Config{.sinks = {{.target = fieldlog::UdpSinkOptions{.address = "127.0.0.1:" + port}}}}));
        }
        fieldlog_test::release_sinks();
    }
}

TEST_CASE("reload() reads the file again and keeps the running set when it is bad", "[config]") {
    const CleanEnv clean;
    const TempDir dir;
    const std::string path = dir.file("fieldlog.toml");
    const auto file_sink = [&](const std::string& name) {
        return "[[sinks]]\ntype = \"file\"\nflush_level = \"info\"\npath = \"" + dir.file(name) + "\"\n";
    };
    write_file(path, file_sink("one.log"));
    fieldlog::configure(Config::load(path));
    const fieldlog::Logger log = fieldlog::get("config.reload");
    log.info("first");

    write_file(path, "level = \"warn\"\n" + file_sink("two.log"));
    fieldlog::reload();
    log.info("hidden");
    log.warn("second");

    write_file(path, "level = \"info\"\n" + file_sink("three.log") + "paint = true\n");
    CHECK(error_of([] { fieldlog::reload(); }) ==
          path + ":6: sinks[0].paint: unknown key for a file sink (known keys: type name format level caller tid timestamp color logger_width loggers exclude path max_size "
                 "rotate rotate_utc keep max_age max_total_bytes compress compression_level buffer flush_interval "
                 "flush_level fsync reopen_check mode follow_symlinks)");
    log.info("hidden too");
    log.warn("third");
    fieldlog::flush();

    const auto one = read_lines(dir.file("one.log"));
    const auto two = read_lines(dir.file("two.log"));
    REQUIRE(one.size() == 1);
    CHECK(one[0].find("\"msg\":\"first\"") != std::string::npos);
    REQUIRE(two.size() == 2);
    CHECK(two[0].find("\"msg\":\"second\"") != std::string::npos);
    CHECK(two[1].find("\"msg\":\"third\"") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.file("three.log")));
    fieldlog_test::release_sinks();  // let go of the files before the directory goes
}

TEST_CASE("the example configuration parses, and so does its production section", "[config][example]") {
    const CleanEnv clean;
    const Config development = Config::load(example_path());
    CHECK(development.level == Level::debug);
    CHECK(development.format == fieldlog::Format::console);
    CHECK(development.levels.at("db.pool") == Level::warn);
    REQUIRE(development.sinks.size() == 1);
    CHECK(development.sinks[0].target.options<fieldlog::StdoutSinkOptions>() != nullptr);
    CHECK(development.sinks[0].timestamp == fieldlog::TimestampPrecision::short_time);
    CHECK(development.sinks[0].colour == fieldlog::ColourMode::automatic);
    CHECK(development.sinks[0].logger_width == 12);

    // Uncomment the production section and drop the development sink, as the file says.
    std::ifstream in(example_path());
    std::stringstream production;
    bool in_production = false;
    bool skip_development_sink = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("# Production:")) {
            in_production = true;
        } else if (in_production) {
            line = line == "#" ? std::string{} : line.starts_with("# ") ? line.substr(2) : line;
        } else if (line == "[[sinks]]" || skip_development_sink) {
            skip_development_sink = true;
            continue;
        }
        production << line << '\n';
    }
    const TempDir dir;
    const std::filesystem::path cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());  // its file sink path is relative
    std::optional<Config> parsed;
    std::string error;
    try {
        parsed = Config::parse(production.str(), "fieldlog.toml (production)");
    } catch (const ConfigError& e) {
        error = e.what();
    }
    std::filesystem::current_path(cwd);
    REQUIRE(error.empty());
    REQUIRE(parsed->sinks.size() == 4);
    const auto& file = file_options(parsed->sinks[0]);
    CHECK(file.path == "logs/app.log");
    CHECK(file.max_size == 100ULL * 1024 * 1024);
    CHECK(file.rotate_every == fieldlog::RotateEvery::day);
    CHECK(file.max_age == 168h);
    CHECK(file.max_total_bytes == 1ULL << 30);
    CHECK(file.compress == fieldlog::FileCompression::gzip);
    CHECK(file.compression_level == 6);
    CHECK(parsed->sinks[0].format == fieldlog::Format::json);
    CHECK(parsed->sinks[0].name == "app");
    const auto& udp = options_of<fieldlog::UdpSinkOptions>(parsed->sinks[1].target);
    CHECK(udp.address == "127.0.0.1:5140");
    CHECK(udp.framing == fieldlog::UdpFraming::rfc5424);
    CHECK(parsed->sinks[1].format == fieldlog::Format::json);
    const auto& journald = options_of<fieldlog::JournaldSinkOptions>(parsed->sinks[2].target);
    CHECK(journald.socket == "/run/systemd/journal/socket");
    CHECK(journald.identifier == "checkout");
    CHECK(parsed->sinks[2].level == Level::info);
    const auto& syslog = options_of<fieldlog::SyslogSinkOptions>(parsed->sinks[3].target);
    CHECK(syslog.address == "logs.example.net:6514");
    CHECK(syslog.transport == fieldlog::SyslogTransport::tls);
    CHECK(syslog.verify);
    CHECK(syslog.server_name == "logs.example.net");
    CHECK(syslog.buffer_bytes == 4u * 1024 * 1024);
    CHECK(syslog.ca_file.empty());
}

TEST_CASE("crash_handlers is on unless the file or the code turns it off", "[config]") {
    CHECK(fieldlog::Config{}.crash_handlers);
    CHECK(fieldlog::Config::parse("").crash_handlers);
    CHECK_FALSE(fieldlog::Config::parse("crash_handlers = false").crash_handlers);
    CHECK_THROWS_WITH(fieldlog::Config::parse("crash_handlers = \"no\"", "app.toml"),
                      "app.toml:1: crash_handlers: expected true or false, got \"no\"");
}

TEST_CASE("FIELDLOG_* variables a configuration made in code does not read are reported once on stderr",
          "[config][env]") {
    const CleanEnv clean;
    const TempDir dir;
    const ScopedEnv level("FIELDLOG_LEVEL", "debug");
    const ScopedEnv format("FIELDLOG_FORMAT", "logfmt");
    const auto sink = std::make_shared<fieldlog::MemorySink>();
    const std::string stderr_path = dir.file("stderr");
    {
        // stderr goes to a file while fieldlog is configured three times.
        std::fflush(stderr);
        const int saved = ::dup(STDERR_FILENO);
        const int file = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        REQUIRE(file >= 0);
        ::dup2(file, STDERR_FILENO);
        Config from_code{.sinks = {fieldlog::SinkConfig{.target = sink}}};
        fieldlog::configure(Config(from_code).apply_env());  // reads them: nothing to say
        fieldlog::configure(from_code);                      // does not: said once
        fieldlog::configure(from_code);
        std::fflush(stderr);
        ::dup2(saved, STDERR_FILENO);
        ::close(saved);
        ::close(file);
    }
    fieldlog_test::release_sinks();
    CHECK(read_lines(stderr_path) ==
          std::vector<std::string>{"fieldlog: FIELDLOG_LEVEL, FIELDLOG_FORMAT: set, but not applied: the program "
                                   "configured fieldlog in code without reading the environment (Config::from_env(), "
                                   "Config::load() and Config::apply_env() read it)"});
}

TEST_CASE("a network sink's address is checked when the file is read: a host, one ':', a port or a service name",
          "[config]") {
    const CleanEnv clean;
    const std::pair<std::string, std::string> refused[] = {
        {"exa mple.com:5140", "'exa mple.com' is not a host name or an IP address"},
        {"127.0.0.1:4318:5", "one ':' between host and port, e.g. 127.0.0.1:5140"},
        {"::1:5140", "an IPv6 address needs brackets, e.g. [::1]:5140"},
        {"[zz]:5140", "[zz] is not an IPv6 address"},
        {"127.0.0.1:-1", "port -1 is neither a number from 1 to 65535 nor a service name like syslog"},
        {"127.0.0.1:65536", "port 65536 is not in 1-65535"},
    };
    for (const auto& [address, problem] : refused) {
        for (const std::string type : {"udp", "syslog"}) {
            CHECK(parse_error("[[sinks]]\ntype = \"" + type + "\"\n\naddress = \"" + address + "\"\n") ==
                  "app.toml:4: sinks[0].address: address '" + address + "': " + problem);
        }
    }
    for (const std::string address : {"[::1]:5140", "localhost:syslog", "logs_1.internal:514", "10.0.0.1:1"}) {
        CHECK_NOTHROW(Config::parse("[[sinks]]\ntype = \"udp\"\naddress = \"" + address + "\"\n", "app.toml"));
    }
}

TEST_CASE("an integer out of range is refused with the range it must be in", "[config]") {
    const CleanEnv clean;
    CHECK(parse_error("[[sinks]]\ntype = \"otlp\"\nbatch_size = 0") ==
          "app.toml:3: sinks[0].batch_size: expected a record count from 1 to 1000000, got 0");
    CHECK(parse_error("[sampling.http]\nfirst = -1") ==
          "app.toml:2: sampling.http.first: expected a count of records from 0 to 4294967295, got -1");
    CHECK(parse_error("[[sinks]]\ntype = \"udp\"\naddress = \"127.0.0.1:5140\"\nfacility = 24") ==
          "app.toml:4: sinks[0].facility: expected a syslog facility from 0 to 23, got 24");
    CHECK(parse_error("[[sinks]]\ntype = \"otlp\"\nqueue_bytes = \"1KiB\"") ==
          "app.toml:3: sinks[0].queue_bytes: expected a size of at least 65536 bytes, got \"1KiB\"");
}
