#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The include-flow checker's own test (tools/check_includes.py): the real tree must pass; tiny
synthetic trees, made in a temporary directory, must pass when they keep the flow and be refused
(exit 1, the offending file:line named) when one include goes against it.
Usage: check_includes_test.py [CHECKER [ROOT]] (default: this repository's)."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHECKER = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tools", "check_includes.py")
ROOT = sys.argv[2] if len(sys.argv) > 2 else REPO

# A tree that keeps the flow: every layer, each including what it may.
CLEAN = {
    "include/fieldlog/logger.hpp": '#include "fieldlog/field.hpp"\n',
    "include/fieldlog/field.hpp": "#include <string_view>\n",
    "src/base/buffer.hpp": '#include "fieldlog/field.hpp"\n#include <fmt/format.h>\n',
    "src/dispatch/record_path.cpp": '#include "fieldlog/logger.hpp"\n#include "base/buffer.hpp"\n'
                                    '#include "encode/encode.hpp"\n#include "dispatch/pipeline.hpp"\n'
                                    '#include "record/thread_context.hpp"\n',
    "src/record/thread_context.hpp": '#include "base/buffer.hpp"\n#include "encode/encode.hpp"\n',
    "src/encode/encode.hpp": '#include "base/buffer.hpp"\n',
    "src/dispatch/pipeline.hpp": '#include "fieldlog/logger.hpp"\n#include "base/buffer.hpp"\n',
    "sinks/ticker.hpp": "#include <chrono>\n",
    "sinks/file_sink.cpp": '#include "ticker.hpp"\n#include "fieldlog/logger.hpp"\n#include "encode/encode.hpp"\n'
                           '// #include "control/state.hpp" in a comment\n'
                           '/* #include "record/thread_context.hpp"\n   a block comment */\n',
    "src/control/state.hpp": '#include "record/thread_context.hpp"\n#include "encode/encode.hpp"\n'
                             '#include "dispatch/pipeline.hpp"\n#include "../sinks/ticker.hpp"\n',
}

# (file, text, a line the checker must print): one include against the flow added to CLEAN.
REFUSED = [
    ("src/encode/json.cpp", '#include "record/thread_context.hpp"\n',
     "src/encode/json.cpp:1: encode includes record/thread_context.hpp (record): against the flow"),
    ("src/encode/json.cpp", '#include <vector>\n\n#include "dispatch/pipeline.hpp"\n',
     "src/encode/json.cpp:3: encode includes dispatch/pipeline.hpp (dispatch): against the flow"),
    ("src/encode/json.cpp", '#include "sinks/ticker.hpp"\n',
     "src/encode/json.cpp:1: encode includes sinks/ticker.hpp (sinks): against the flow"),
    ("src/record/emit.cpp", '#include "dispatch/pipeline.hpp"\n',
     "src/record/emit.cpp:1: record includes dispatch/pipeline.hpp (dispatch): against the flow"),
    ("sinks/udp_sink.cpp", '#include "control/state.hpp"\n',
     "sinks/udp_sink.cpp:1: sinks includes control/state.hpp (control): against the flow"),
    ("sinks/udp_sink.cpp", '#include "dispatch/pipeline.hpp"\n',
     "sinks/udp_sink.cpp:1: sinks includes dispatch/pipeline.hpp (dispatch): against the flow"),
    ("src/record/emit.cpp", '#include <control/state.hpp>\n',
     "src/record/emit.cpp:1: record includes control/state.hpp (control): against the flow"),
    ("include/fieldlog/scope.hpp", '#include "fieldlog/field.hpp"\n#include "../../src/base/buffer.hpp"\n',
     "include/fieldlog/scope.hpp:2: public includes ../../src/base/buffer.hpp (base): against the flow"),
    ("src/base/arena.hpp", '#include "record/thread_context.hpp"\n',
     "src/base/arena.hpp:1: base includes record/thread_context.hpp (record): against the flow"),
    ("src/record/scope.cpp", '#include "record/missing.hpp"\n',
     "src/record/scope.cpp:1: record includes record/missing.hpp (unknown): not in the tree"),
    ("src/util.cpp", "#include <string>\n", "src/util.cpp:1: in no layer"),
]

# Two layers that include each other: the include against the flow and the cycle, both named.
CYCLE = ("src/encode/members.hpp", '#include "record/thread_context.hpp"\n', [
    "src/encode/members.hpp:1: encode includes record/thread_context.hpp (record): against the flow",
    "src/encode/members.hpp:1: include cycle between layers record, encode",
])


def make_tree(directory, extra):
    for path, text in list(CLEAN.items()) + extra:
        full = os.path.join(directory, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "a", encoding="utf-8") as f:
            f.write(text)


def run(root):
    result = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def main():
    failures = []

    code, output = run(ROOT)
    if code != 0 or "OK" not in output:
        failures.append(f"the repository's tree: exit {code}, expected 0 with an OK line\n{output}")

    with tempfile.TemporaryDirectory() as directory:
        make_tree(directory, [])
        code, output = run(directory)
        if code != 0 or len(output.strip().splitlines()) != 1 or "OK" not in output:
            failures.append(f"the clean synthetic tree: exit {code}, expected 0 and one OK line\n{output}")

    cases = [(path, text, [line]) for path, text, line in REFUSED] + [CYCLE]
    for path, text, expected in cases:
        with tempfile.TemporaryDirectory() as directory:
            make_tree(directory, [(path, text)])
            code, output = run(directory)
            missing = [line for line in expected if not any(got.startswith(line) for got in output.splitlines())]
            if code != 1 or missing:
                failures.append(f"{path} with {text.strip()!r}: exit {code} (expected 1), missing {missing}\n{output}")

    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print(f"check_includes_test: OK (the real tree, a clean tree, {len(cases)} refused trees)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
