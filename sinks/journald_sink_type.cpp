// SPDX-License-Identifier: MIT
// The journald sink as a configuration names it (`type = "journald"`): its keys, read into
// JournaldSinkOptions, and what configure() makes of those options.
#include <sys/un.h>

#include <fmt/format.h>

#include "fieldlog/sinks/journald_sink.hpp"
#include "base/builtin_sink_types.hpp"

namespace fieldlog {

std::shared_ptr<Sink> make_sink(const JournaldSinkOptions& options) { return std::make_shared<JournaldSink>(options); }

SinkDestination sink_destination(const JournaldSinkOptions& options) { return {.kind = "journald", .target = options.socket}; }

namespace detail {
namespace {

/// An AF_UNIX socket path, without its terminating NUL, fits in sockaddr_un.
constexpr std::size_t kLongestSocketPath = sizeof(sockaddr_un::sun_path) - 1;

}  // namespace

SinkType journald_sink_type() {
    return {"journald", {"socket", "identifier"}, [](SinkSettings& settings) -> SinkTarget {
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
                return journald;
            }};
}

}  // namespace detail
}  // namespace fieldlog
