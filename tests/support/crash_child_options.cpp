// SPDX-License-Identifier: MIT
// Linked into each child process a test crashes: the parent expects death by the signal, as with
// no handler before fieldlog's. AddressSanitizer installs a SIGSEGV handler at start-up, which
// fieldlog's would chain to (its report, then exit 1); this keeps it out. Memory errors are
// still caught where they happen, by the instrumentation.
extern "C" const char* __asan_default_options() { return "handle_segv=0"; }
