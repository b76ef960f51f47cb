// SPDX-License-Identifier: MIT
// The journald sink as a configuration names it (`type = "journald"`): its keys, read into
// JournaldSinkOptions, and what configure() makes of those options.
#include <sys/un.h>

#include <fmt/format.h>

#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/journald_sink.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const JournaldSinkOptions& options) { return std::make_shared<JournaldSink>(options); }

SinkDestination sink_destination(const JournaldSinkOptions& options) { return {.kind = "journald", .target = options.socket}; }

namespace detail {
namespace {

/// An AF_UNIX socket path, without its terminating NUL, fits in sockaddr_un.
constexpr std::size_t kLongestSocketPath = sizeof(sockaddr_un::sun_path) - 1;

}  // namespace

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType journald_sink_type() {
    return {"journald", {"socket", "identifier", "when_full", "wait_timeout"}, [](SinkSettings& settings) -> SinkTarget {
                if (settings.has("format") && settings.text("format", "a format") != "json") {
                    settings.expected("format", "json (a journald sink writes values as JSON does)");
                }
                constexpr std::string_view socket = "a socket path like \"/run/systemd/journal/socket\"";
                JournaldSinkOptions journald;
                journald.socket = settings.text("socket", socket, journald.socket);
                if (journald.socket.empty()) settings.expected("socket", socket);
                if (journald.socket.size() > kLongestSocketPath) {
                    settings.expected("socket", fmt::format("a socket path of at most {} bytes", kLongestSocketPath));
                }
                settings.identify_by("socket");
                journald.identifier = settings.text("identifier", "a name", journald.identifier);
                journald.when_full = settings.choice<JournaldWhenFull>(
                    "when_full", journald.when_full, {{"wait", JournaldWhenFull::wait}, {"drop", JournaldWhenFull::drop}});
                journald.wait_timeout = settings.duration("wait_timeout", journald.wait_timeout, "10s");
                if (journald.wait_timeout <= std::chrono::milliseconds::zero()) {
                    settings.expected("wait_timeout", "a duration above 0 like \"10s\" (when_full = \"drop\" never waits)");
                }
                return journald;
            }};
}

}  // namespace detail
}  // namespace fieldlog
