// SPDX-License-Identifier: MIT
// The OTLP sink's HTTP client in a build without libcurl (FIELDLOG_WITH_OTLP=OFF): making an
// OTLP sink is refused, so configure() names the sink and the way to a build that has it; an
// endpoint is no endpoint here, for the same reason.
#include <stdexcept>
#include <string>

#include "otlp_http.hpp"

namespace fieldlog::detail {

namespace {
constexpr const char* kNoOtlp =
    "this build of fieldlog has no OTLP: rebuild with -DFIELDLOG_WITH_OTLP=ON (needs libcurl: libcurl4-gnutls-dev)";
}  // namespace

std::string endpoint_problem(const std::string&) { return kNoOtlp; }

struct OtlpHttpClient::State {};

OtlpHttpClient::OtlpHttpClient(const OtlpSinkOptions&, std::string_view) { throw std::invalid_argument(kNoOtlp); }

OtlpHttpClient::~OtlpHttpClient() = default;

HttpResult OtlpHttpClient::post(std::string_view, std::chrono::milliseconds) { return {}; }

void OtlpHttpClient::give_up_at(std::chrono::steady_clock::time_point) noexcept {}

CrashPost* OtlpHttpClient::crash_post() noexcept { return nullptr; }

}  // namespace fieldlog::detail
