#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs fieldlog_bench and prints the fieldlog/spdlog comparison as a short table.

Where it sits: the README's main command builds fieldlog_bench and calls this script, which
runs the logger benchmarks (bench/logger_bench.cpp) side by side in one process, pairs each
`fieldlog/<workload>/<sink>` row with its `spdlog/...` row and prints ns/op, the ratio and
allocs/op. With repetitions the medians are shown, and the repetitions of all benchmarks run
in a random interleaved order (Google Benchmark's random interleaving), so that a busy spell
of a shared host falls on both sides of a comparison instead of on one benchmark. Times are
the calling thread's CPU time per call by default (steady on a busy machine; write() to a file
counts, as kernel time of the caller); --time real gives wall-clock time instead.

    bench/compare.py --bench build/bench/fieldlog_bench [--repetitions 3] [--markdown]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DEFAULT_FILTER = r"^(fieldlog|spdlog)/(static_msg|fields_10|ctx_10|disabled)/"


def run_benchmarks(bench, bench_filter, repetitions, min_time, interleave, iterations=None):
    """Runs the binary once and returns its JSON report; with `iterations`, every benchmark runs
    that many (bench/fixed_iterations.hpp) and min_time is ignored."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        cmd = [bench, f"--benchmark_filter={bench_filter}", f"--benchmark_out={out}",
               "--benchmark_out_format=json"]
        if repetitions > 1:
            cmd += [f"--benchmark_repetitions={repetitions}", "--benchmark_report_aggregates_only=true"]
            if interleave:
                cmd.append("--benchmark_enable_random_interleaving=true")
        if min_time:
            cmd.append(f"--benchmark_min_time={min_time}")
        env = dict(os.environ, FIELDLOG_BENCH_ITERATIONS=str(iterations)) if iterations else None
        # The console report goes to stderr so that stdout holds just the table.
        subprocess.run(cmd, check=True, stdout=sys.stderr, env=env)
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def to_ns(value, unit):
    return value * {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def collect(report, repetitions, clock):
    """Maps each benchmark name to (ns/op, allocs/op), medians with repetitions, in the order
    the benchmarks are registered (interleaved runs report them in the order they finished)."""
    def registered(b):
        return b.get("family_index", 0), b.get("per_family_instance_index", 0)

    rows = {}
    for b in sorted(report["benchmarks"], key=registered):
        if repetitions > 1 and b.get("aggregate_name") != "median":
            continue
        if repetitions <= 1 and b.get("run_type") == "aggregate":
            continue
        name = re.sub(r"/iterations:\d+", "", b.get("run_name", b["name"]))
        rows[name] = (to_ns(b[clock + "_time"], b["time_unit"]), b.get("allocs_per_op"))
    return rows


def split(name):
    """'fieldlog/fields_10/null/threads:2' -> ('fieldlog', 'fields_10/null/threads:2')."""
    system, _, rest = name.partition("/")
    return system, rest


def fmt_ns(ns):
    if ns is None:
        return "-"
    return f"{ns:.1f}" if ns < 100 else f"{ns:.0f}"


def fmt_allocs(allocs):
    if allocs is None:
        return "-"
    return "0" if allocs == 0 else f"{allocs:.3g}"


def table(rows):
    """The comparison rows in benchmark order: fieldlog next to spdlog."""
    order = []
    for name in rows:
        system, rest = split(name)
        if system in ("fieldlog", "spdlog") and rest not in order:
            order.append(rest)
    lines = []
    for rest in order:
        ours = rows.get("fieldlog/" + rest)
        theirs = rows.get("spdlog/" + rest)
        ratio = f"{theirs[0] / ours[0]:.1f}x" if ours and theirs and ours[0] > 0 else "-"
        lines.append((rest,
                      fmt_ns(ours[0] if ours else None), fmt_ns(theirs[0] if theirs else None), ratio,
                      fmt_allocs(ours[1] if ours else None), fmt_allocs(theirs[1] if theirs else None)))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="build/bench/fieldlog_bench", help="path of fieldlog_bench")
    parser.add_argument("--filter", default=DEFAULT_FILTER, help="--benchmark_filter regex")
    parser.add_argument("--repetitions", type=int, default=1, help="runs per benchmark; medians shown when > 1")
    parser.add_argument("--min-time", type=float, default=None, help="--benchmark_min_time in seconds")
    parser.add_argument("--no-interleave", action="store_true",
                        help="run each benchmark's repetitions back to back instead of interleaved")
    parser.add_argument("--time", choices=("cpu", "real"), default="cpu",
                        help="CPU time of the calling thread (default) or wall-clock time per call")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (for bench/README.md)")
    parser.add_argument("--json", help="also keep the raw Google Benchmark JSON in this file")
    args = parser.parse_args()

    report = run_benchmarks(args.bench, args.filter, args.repetitions, args.min_time, not args.no_interleave)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    header = ("benchmark", "fieldlog ns/op", "spdlog ns/op", "spdlog/fieldlog", "fieldlog allocs/op",
              "spdlog allocs/op")
    lines = table(collect(report, args.repetitions, args.time))
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(str(row[i])) for row in [header] + lines) for i in range(len(header))]
        for row in [header] + lines:
            print("  ".join(str(cell).ljust(w) if i == 0 else str(cell).rjust(w)
                            for i, (cell, w) in enumerate(zip(row, widths))))
    context = report.get("context", {})
    print(f"\n{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz; "
          + (f"medians of {args.repetitions} interleaved runs; " if args.repetitions > 1 and not args.no_interleave
             else f"medians of {args.repetitions} runs; " if args.repetitions > 1 else "")
          + ("CPU time per call of the calling thread." if args.time == "cpu"
             else "wall-clock time per call (threads:2: elapsed time / calls of both threads)."))


if __name__ == "__main__":
    main()
