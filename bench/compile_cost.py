#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What logging costs the compiler, side by side: fieldlog's call-site header (both call forms),
spdlog and, given its include directory, quill. The workload follows quill's own compile-time
benchmark (benchmarks/compile_time): info statements of 1-10 arguments drawn from 19 kinds of
values with a fixed seed, the same values for every library. For g++ and clang at -O2 it
measures the preprocessed lines of each header, the CPU seconds (user + sys of the compiler and
its children) of a translation unit with no statement and with N, and from their difference the
seconds and .text bytes each statement adds. Two layouts: all N statements in one function, and
functions of 100. Writes a Markdown table (stdout or --markdown) and --json.

Usage: compile_cost.py [--statements N] [--quill-include DIR] [--compilers g++ clang++]
                       [--forms FORM...] [--markdown FILE] [--json FILE] [--smoke]
Run it alone on the machine (flock /tmp/fieldlog-cpu.lock on a shared one): the seconds are CPU
time, but a busy machine still slows the caches they depend on.
"""
import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 1337
PER_FUNCTION = 100
FLAGS = ["-std=c++20", "-O2"]

# The 19 kinds of quill's workload, as C++ expressions.
KINDS = ["1", "2", "3.0", "4.0f", "5L", "6LL", "7UL", "8ULL", "true", "false",
         '"example1"', '"example2"', '"example3"', 'std::string("str1")', 'std::string("str2")',
         'std::string_view("view1")', 'std::string_view("view2")',
         "static_cast<short>(9)", "static_cast<unsigned short>(10)"]
WORDS = ["quick", "brown", "fox", "jumps", "over", "lazy", "dog", "logging", "test", "example"]


def workload(count):
    """[(message words, [argument expressions])], the same for every library."""
    rng = random.Random(SEED)
    statements = []
    for _ in range(count):
        args = rng.sample(KINDS, rng.randint(1, 10))
        words = " ".join(rng.sample(WORDS, rng.randint(3, 4)))
        statements.append((words, args))
    return statements


def placeholders(words, args):
    return f'"{words} {" ".join("{}" for _ in args)}"'


# Each variant: the header lines, the parameter of each function, and one statement.
VARIANTS = {
    "fieldlog fmt": {
        "library": "fieldlog",
        "param": "const fieldlog::Logger& log",
        "statement": lambda w, a: f"log.info({placeholders(w, a)}, {', '.join(a)});",
    },
    "fieldlog fields": {
        "library": "fieldlog",
        "param": "const fieldlog::Logger& log",
        "statement": lambda w, a: 'log.info("{}", {{{}}});'.format(
            w, ", ".join(f'{{"k{i}", {v}}}' for i, v in enumerate(a))),
    },
    "spdlog": {
        "library": "spdlog",
        "param": "",
        "statement": lambda w, a: f"spdlog::info({placeholders(w, a)}, {', '.join(a)});",
    },
    "quill": {
        "library": "quill",
        "param": "quill::Logger* logger",
        "statement": lambda w, a: f"LOG_INFO(logger, {placeholders(w, a)}, {', '.join(a)});",
    },
}


def libraries(args):
    """name → (include lines, extra compiler flags)."""
    libs = {"fieldlog": ([f"#include <{args.header}>"], ["-I", args.include])}
    if args.smoke:
        return libs
    # For comparison: the all-in-one header, and the floor of any header built on fmt's core
    # header and <chrono>.
    libs["fieldlog.hpp (all-in-one)"] = (["#include <fieldlog/fieldlog.hpp>"], ["-I", args.include])
    libs["fmt/core.h + <chrono>"] = (["#include <fmt/core.h>", "#include <chrono>"], [])
    libs["spdlog"] = (["#include <spdlog/spdlog.h>"],
                      ["-DSPDLOG_SHARED_LIB", "-DSPDLOG_COMPILED_LIB", "-DSPDLOG_FMT_EXTERNAL"])
    if args.quill_include:
        libs["quill"] = (['#include "quill/LogMacros.h"', '#include "quill/Logger.h"'], ["-I", args.quill_include])
    return libs


def source(includes, variant, statements, per_function):
    """A translation unit: the headers, then the statements in functions of `per_function`."""
    lines = includes + ["#include <string>", "#include <string_view>", ""]
    param = VARIANTS[variant]["param"] if variant else ""
    chunks = [statements[i:i + per_function] for i in range(0, len(statements), per_function)] or [[]]
    for number, chunk in enumerate(chunks):
        lines.append(f"void log_{number}({param}) {{")
        lines += ["    " + VARIANTS[variant]["statement"](w, a) for w, a in chunk]
        lines.append("}")
    return "\n".join(lines) + "\n"


def cpu_seconds(command):
    """CPU seconds (user + sys) of `command` and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"compile_cost: {' '.join(command)} failed:\n{result.stderr[:4000]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def text_bytes(obj):
    """Bytes of every .text section of an object file (inline functions have their own)."""
    out = subprocess.run(["size", "-A", obj], check=True, capture_output=True, text=True).stdout
    return sum(int(m.group(1)) for m in re.finditer(r"^\.text\S*\s+(\d+)", out, re.M))


def compile_one(compiler, flags, text, work, name):
    path = os.path.join(work, name + ".cpp")
    with open(path, "w") as f:
        f.write(text)
    obj = os.path.join(work, name + ".o")
    seconds = cpu_seconds([compiler, *FLAGS, *flags, "-c", path, "-o", obj])
    return seconds, text_bytes(obj)


def preprocessed_lines(compiler, flags, includes):
    command = [compiler, "-std=c++20", "-E", "-P", *flags, "-x", "c++", "-"]
    result = subprocess.run(command, input="\n".join(includes) + "\n", capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"compile_cost: preprocessing {includes} failed:\n{result.stderr[:4000]}")
    return result.stdout.count("\n")


# What the call-site header must not bring in: configuration, encoders, sinks, fmt's full header.
KEPT_OUT = re.compile(r"fieldlog/(config|encoder|sink|metrics)\.hpp|fieldlog/sinks/|fmt/format\.h")


def check_kept_out(compiler, include):
    """Exits naming any header log.hpp includes, directly or not, that it must not."""
    command = [compiler, "-std=c++20", "-fsyntax-only", "-H", "-I", include, "-x", "c++", "-"]
    result = subprocess.run(command, input="#include <fieldlog/log.hpp>\n", capture_output=True, text=True)
    found = sorted({m.group(0) for m in KEPT_OUT.finditer(result.stderr)})
    if result.returncode != 0 or found:
        sys.exit(f"compile_cost: fieldlog/log.hpp includes {found or result.stderr[:4000]}")


def version(compiler):
    return subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def measure(args, work):
    statements = workload(args.statements)
    libs = libraries(args)
    layouts = {"one function": args.statements, f"functions of {PER_FUNCTION}": PER_FUNCTION}
    if args.smoke:
        layouts = {"one function": args.statements}
    variants = [v for v in args.forms if VARIANTS[v]["library"] in libs]
    report = {"statements": args.statements, "seed": SEED, "flags": FLAGS, "compilers": {},
              "headers": {}, "statements_cost": {}}
    for name, (includes, flags) in libs.items():
        report["headers"][name] = {"lines": preprocessed_lines(args.compilers[0], flags, includes), "empty_tu": {}}
    for compiler in args.compilers:
        report["compilers"][compiler] = version(compiler)
        for name, (includes, flags) in libs.items():
            # A TU with the header and one empty function: what a file pays before it logs.
            seconds, size = compile_one(compiler, flags, source(includes, None, [], 1), work, "empty")
            report["headers"][name]["empty_tu"][compiler] = {"seconds": seconds, "text": size}
        for layout, per_function in layouts.items():
            for variant in variants:
                includes, flags = libs[VARIANTS[variant]["library"]]
                zero_s, zero_text = compile_one(compiler, flags, source(includes, variant, [], per_function), work, "zero")
                full_s, full_text = compile_one(
                    compiler, flags, source(includes, variant, statements, per_function), work, "full")
                n = max(len(statements), 1)
                report["statements_cost"].setdefault(layout, {}).setdefault(variant, {})[compiler] = {
                    "zero_seconds": zero_s, "full_seconds": full_s,
                    "ms_per_statement": 1000 * (full_s - zero_s) / n,
                    "text_per_statement": (full_text - zero_text) / n,
                }
                print(f"compile_cost: {compiler} {layout} {variant}: {zero_s:.2f} s → {full_s:.2f} s",
                      file=sys.stderr)
    return report


def markdown(report):
    compilers = list(report["compilers"])
    short = {c: os.path.basename(c) for c in compilers}
    out = [f"N = {report['statements']} statements, seed {report['seed']}, {' '.join(report['flags'])}; "
           "CPU seconds of the compiler, one run.", ""]
    head = "| header | preprocessed lines |" + "".join(f" TU, no statement, {short[c]} (s) |" for c in compilers)
    out += [head, "|" + "---|" * (2 + len(compilers))]
    for name, h in report["headers"].items():
        row = f"| {name} | {h['lines']:,} |"
        row += "".join(f" {h['empty_tu'][c]['seconds']:.2f} |" for c in compilers)
        out.append(row)
    for layout, rows in report["statements_cost"].items():
        out += ["", f"Statements in {layout}:", ""]
        head = "| call form |"
        for c in compilers:
            head += f" {short[c]}: TU 0 → N (s) | {short[c]}: ms/statement | {short[c]}: .text B/statement |"
        out += [head, "|" + "---|" * (1 + 3 * len(compilers))]
        for variant, by_compiler in rows.items():
            row = f"| {variant} |"
            for c in compilers:
                m = by_compiler[c]
                row += (f" {m['zero_seconds']:.2f} → {m['full_seconds']:.2f} | {m['ms_per_statement']:.1f} |"
                        f" {m['text_per_statement']:,.0f} |")
            out.append(row)
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=int, default=200, help="N (default 200)")
    parser.add_argument("--compilers", nargs="+", default=["g++", "clang++"])
    parser.add_argument("--include", default=os.path.join(ROOT, "include"), help="fieldlog's include directory")
    parser.add_argument("--header", default="fieldlog/log.hpp",
                        help="fieldlog's header for the call forms (fieldlog/fieldlog.hpp on code before log.hpp)")
    parser.add_argument("--forms", nargs="+", choices=list(VARIANTS), default=list(VARIANTS),
                        help="the call forms to measure (default: all)")
    parser.add_argument("--quill-include", help="quill's include directory (a quill checkout's include/)")
    parser.add_argument("--markdown", help="write the table here (default: stdout)")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--smoke", action="store_true",
                        help="a quick check that the script runs: fieldlog only, one layout, the first compiler")
    args = parser.parse_args()
    if args.smoke:
        args.compilers = args.compilers[:1]
        if args.header == "fieldlog/log.hpp":
            check_kept_out(args.compilers[0], args.include)
    with tempfile.TemporaryDirectory(prefix="compile_cost.") as work:
        report = measure(args, work)
    table = markdown(report)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    else:
        sys.stdout.write(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
