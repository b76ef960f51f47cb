// SPDX-License-Identifier: MIT
// The null sink as a configuration names it: "null", no key of its own. NullSink itself is
// inline in fieldlog/sinks/basic_sinks.hpp; its own module keeps the built-in types listed in
// the order a configuration error names them.
#include <memory>

#include "fieldlog/sink_registry.hpp"
#include "fieldlog/sinks/basic_sinks.hpp"

namespace fieldlog::detail {

/// Listed by the folder's fieldlog_sink_module() line in CMakeLists.txt.
SinkType null_sink_type() {
    return {"null", {}, [](SinkSettings&) -> SinkTarget { return std::make_shared<NullSink>(); }};
}

}  // namespace fieldlog::detail
