// SPDX-License-Identifier: MIT
// The tests' time zone oracle is date's tz database library (libdate-tz), and Debian builds it
// against libstdc++ only. A build with libc++ links this instead: a test that asks the oracle
// for a zone fails with the words a left-out feature's refusal uses, so it counts as skipped
// (catch_main.cpp). fieldlog's own named zones need the same library (FIELDLOG_WITH_TZ), so such
// a build has none, and those tests meet the library's refusal first.
#include <date/tz.h>

#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace date {

const time_zone* locate_zone(std::string_view) {
    throw std::runtime_error("this build of fieldlog's tests has no tz database oracle (date's is built for libstdc++)");
}

// Never reached (no zone is ever located); here for the linker only.
sys_info time_zone::get_info_impl(sys_seconds) const { std::abort(); }
local_info time_zone::get_info_impl(local_seconds) const { std::abort(); }

}  // namespace date
