// SPDX-License-Identifier: MIT
// Against the minimal variant (every FIELDLOG_WITH_* off): what asks for a feature left out
// fails with an error that names the option to rebuild with. Prints one line per refusal, the
// error's text; run.sh checks them. UTC and the local zone work without date-tz.
#include <fieldlog/fieldlog.hpp>
#include <fieldlog/sinks/file_sink.hpp>
#include <fieldlog/sinks/otlp_sink.hpp>
#include <fieldlog/sinks/syslog_sink.hpp>

#include <stdlib.h>

#include <cstdio>
#include <exception>
#include <functional>

namespace {

void refusal(const char* what, const std::function<void()>& ask) {
    try {
        ask();
        std::printf("%s: accepted\n", what);
    } catch (const std::exception& e) {
        std::printf("%s: %s\n", what, e.what());
    }
}

}  // namespace

int main() {
    refusal("toml", [] { (void)fieldlog::Config::parse("level = \"info\"\n", "app.toml"); });
    refusal("zone", [] { (void)fieldlog::TimeZone::named("Europe/Berlin"); });
    ::setenv("TZ", "Asia/Kolkata", 1);  // read from its TZif file, as the C library reads it
    const fieldlog::TimeZone local = fieldlog::TimeZone::local();
    char text[fieldlog::max_rfc3339_size];
    const char* end = fieldlog::append_rfc3339(text, fieldlog::Timestamp(1767225600, 0), {.zone = local});
    std::printf("local: %.*s %.*s\n", static_cast<int>(local.name().size()), local.name().data(),
                static_cast<int>(end - text), text);
    refusal("tls", [] {
        fieldlog::configure(fieldlog::Config{
            .sinks = {{.target = fieldlog::SyslogSinkOptions{.address = "127.0.0.1:6514",
                                                              .transport = fieldlog::SyslogTransport::tls}}}});
    });
    refusal("gzip", [] {
        fieldlog::configure(fieldlog::Config{
            .sinks = {{.target = fieldlog::FileSinkOptions{.path = "/tmp/fieldlog-refusals.log",
                                                            .compress = fieldlog::FileCompression::gzip}}}});
    });
    refusal("otlp", [] { (void)fieldlog::make_otlp_sink({}); });
    refusal("utc", [] { (void)fieldlog::TimeZone::parse("UTC"); });
}
