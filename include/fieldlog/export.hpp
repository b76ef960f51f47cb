// SPDX-License-Identifier: MIT
// FIELDLOG_API marks what the library exports: the public API, and the few detail:: names its
// inline code reaches. The library is compiled with hidden visibility, so everything else stays
// inside it. FIELDLOG_SHARED is defined for a shared build and its users (CMake's target and
// fieldlog.pc carry it); a static fieldlog exports nothing of its own, so linked into a plugin
// built with -fvisibility=hidden its symbols stay inside that plugin.
#pragma once

#if defined(FIELDLOG_SHARED)
#define FIELDLOG_API __attribute__((visibility("default")))
/// For an exported class's private parts (its pimpl State), which would be exported with it.
#define FIELDLOG_LOCAL __attribute__((visibility("hidden")))
#else
#define FIELDLOG_API
#define FIELDLOG_LOCAL
#endif
