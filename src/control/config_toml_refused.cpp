// SPDX-License-Identifier: MIT
// Config::load and Config::parse in a build without toml++ (FIELDLOG_WITH_TOML=OFF): a TOML
// file, given directly or through FIELDLOG_CONFIG, is refused with the way to a build that
// reads it, rather than ignored.
#include "fieldlog/config.hpp"

#include <string>

namespace fieldlog {
namespace {

constexpr std::string_view kNoToml =
    "this build of fieldlog reads no TOML files: rebuild with -DFIELDLOG_WITH_TOML=ON (needs toml++: "
    "libtomlplusplus-dev)";

}  // namespace

Config Config::parse(std::string_view, std::string_view source) {
    throw ConfigError(std::string(source) + ": " + std::string(kNoToml));
}

Config Config::load(const std::string& path) { throw ConfigError(path + ": " + std::string(kNoToml)); }

}  // namespace fieldlog
