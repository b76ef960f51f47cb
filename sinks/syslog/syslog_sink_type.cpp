// SPDX-License-Identifier: MIT
// The syslog sink as a configuration names it (`type = "syslog"`): its keys, read into
// SyslogSinkOptions, and what configure() makes of those options. Certificate files that
// cannot be read are refused while the file is read, naming the key.
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include "base/quoting.hpp"
#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/syslog_sink.hpp"
#include "sinks/common/address.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const SyslogSinkOptions& options) { return std::make_shared<SyslogSink>(options); }

SinkDestination sink_destination(const SyslogSinkOptions& options) { return {.kind = "syslog", .target = options.address}; }

namespace detail {
namespace {

/// A file path the process can read, from `key`; "" when the table leaves it out.
std::string readable_file(const SinkSettings& settings, std::string_view key) {
    if (!settings.has(key)) return {};
    std::string path = settings.text(key, "a file path");
    if (path.empty()) settings.expected(key, "a file path");
    if (::access(path.c_str(), R_OK) != 0) {
        settings.fail(key, fmt::format("cannot read {}: {}", in_quotes(path), std::generic_category().message(errno)));
    }
    return path;
}

SyslogSinkOptions syslog_options(SinkSettings& settings) {
    SyslogSinkOptions syslog;
    syslog.address = address_setting(settings, "an address like \"127.0.0.1:6514\"");
    syslog.transport = settings.choice<SyslogTransport>("transport", syslog.transport,
                                                        {{"tcp", SyslogTransport::tcp},
                                                         {"tls", SyslogTransport::tls},
                                                         {"relp", SyslogTransport::relp},
                                                         {"relp-tls", SyslogTransport::relp_tls}});
    syslog.ca_file = readable_file(settings, "ca_file");
    syslog.cert_file = readable_file(settings, "cert_file");
    syslog.key_file = readable_file(settings, "key_file");
    syslog.verify = settings.boolean("verify", syslog.verify);
    syslog.server_name = settings.text("server_name", "a host name", syslog.server_name);
    syslog.buffer_bytes = settings.size("buffer_bytes", syslog.buffer_bytes, "4MiB", 4096);
    syslog.reconnect_max = settings.duration("reconnect_max", syslog.reconnect_max, "5s");
    syslog.drain_timeout = settings.duration("drain_timeout", syslog.drain_timeout, "2s");
    syslog.facility = static_cast<int>(settings.integer("facility", syslog.facility, 0, 23, "a syslog facility"));
    syslog.app_name = settings.text("app_name", "a name", syslog.app_name);
    syslog.hostname = settings.text("hostname", "a host name", syslog.hostname);
    if (syslog.address.empty()) settings.missing("address", "a syslog sink connects to \"host:port\"");
    if (syslog.transport != SyslogTransport::tls && syslog.transport != SyslogTransport::relp_tls) {
        for (const char* tls_only : {"ca_file", "cert_file", "key_file", "server_name", "verify"}) {
            if (settings.has(tls_only)) settings.fail(tls_only, "only for transport = \"tls\" or \"relp-tls\"");
        }
    }
    if (syslog.cert_file.empty() != syslog.key_file.empty()) {
        settings.fail(syslog.cert_file.empty() ? "key_file" : "cert_file", "needs both cert_file and key_file");
    }
    return syslog;
}

}  // namespace

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType syslog_sink_type() {
    return {"syslog",
            {"address", "transport", "ca_file", "cert_file", "key_file", "verify", "server_name", "buffer_bytes",
             "reconnect_max", "drain_timeout", "facility", "app_name", "hostname"},
            [](SinkSettings& settings) -> SinkTarget { return syslog_options(settings); }};
}

}  // namespace detail
}  // namespace fieldlog
