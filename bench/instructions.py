#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per call, counted by callgrind: the hot-path figure that repeats to 0.1 %.

Runs each benchmark of fieldlog_bench that --filter matches under callgrind twice, at two fixed
iteration counts (FIELDLOG_BENCH_ITERATIONS, see fixed_iterations.hpp), and prints one line per
benchmark, `<name> <instructions per call>`: the difference of the two runs divided by the
difference of the counts, so set-up, warm-up and process start cancel. Only the calling threads
count (callgrind's --separate-threads=yes; a thread counts when it ran the benchmark body), so
an async benchmark's figure is the caller's cost without the writer thread's; a /threads:N
benchmark's is per call on each thread.

  bench/instructions.py --bench build/bench/fieldlog_bench --filter '^fieldlog/(static_msg|fields_10)/null$'
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

# A thread that ran the benchmark body has this function in its call graph (Google Benchmark's
# per-thread runner; the writer and background threads have no such frame).
CALLER_MARK = "benchmark::State::StartKeepRunning"


ITERATIONS_IN_NAME = re.compile(r"/iterations:\d+")


def list_benchmarks(bench, pattern, iterations=None):
    env = dict(os.environ)
    env.pop("FIELDLOG_BENCH_ITERATIONS", None)
    if iterations is not None:
        env["FIELDLOG_BENCH_ITERATIONS"] = str(iterations)
    out = subprocess.run([bench, "--benchmark_list_tests=true", f"--benchmark_filter={pattern}"],
                         env=env, capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def run_name(bench, name, iterations):
    """The name Google Benchmark gives `name` at a fixed count: it adds `/iterations:N`."""
    for candidate in list_benchmarks(bench, ".", iterations):
        if ITERATIONS_IN_NAME.sub("", candidate) == ITERATIONS_IN_NAME.sub("", name):
            return candidate
    raise RuntimeError(f"{name}: not found at {iterations} iterations")


def caller_instructions(bench, name, iterations, workdir):
    """Instructions executed by the calling threads of one run of benchmark `name`."""
    prefix = os.path.join(workdir, f"cg.{iterations}")
    for old in glob.glob(prefix + "*"):
        os.unlink(old)
    env = dict(os.environ, FIELDLOG_BENCH_ITERATIONS=str(iterations))
    command = ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={prefix}.%p",
               bench, f"--benchmark_filter=^{re.escape(run_name(bench, name, iterations))}$",
               "--benchmark_repetitions=1"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{name}: callgrind run failed ({result.returncode}):\n{result.stderr[-2000:]}")
    total = 0
    callers = 0
    for path in glob.glob(prefix + "*"):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        summary = re.search(r"^(?:summary|totals): (\d+)", text, flags=re.M)
        if summary and CALLER_MARK in text:
            total += int(summary.group(1))
            callers += 1
    if callers == 0:
        raise RuntimeError(f"{name}: no thread ran the benchmark body (is it a fieldlog_bench benchmark?)")
    return total


def threads_of(name):
    match = re.search(r"/threads:(\d+)", name)
    return int(match.group(1)) if match else 1


def measure(bench, names, low=2000, high=4000, report=None):
    """{name: instructions per call} for each benchmark in `names`; `report(name, figure)` is
    called as each one is done (bench/report.py reuses this)."""
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            difference = (caller_instructions(bench, name, high, workdir) -
                          caller_instructions(bench, name, low, workdir))
            results[name] = round(difference / ((high - low) * threads_of(name)))
            if report:
                report(name, results[name])
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", required=True, help="the fieldlog_bench binary")
    parser.add_argument("--filter", default=".", help="regex of benchmark names (Google Benchmark's filter)")
    parser.add_argument("--iterations", type=int, nargs=2, default=[2000, 4000], metavar=("LOW", "HIGH"),
                        help="the two iteration counts (default 2000 4000)")
    parser.add_argument("--json", metavar="FILE", help="also write {name: instructions per call} to FILE")
    args = parser.parse_args()
    low, high = args.iterations
    if not 0 < low < high:
        parser.error("--iterations: LOW must be positive and below HIGH")

    names = list_benchmarks(args.bench, args.filter)
    if not names:
        print(f"no benchmark matches {args.filter!r}", file=sys.stderr)
        return 1
    results = measure(args.bench, names, low, high,
                      lambda name, per_call: print(f"{name} {per_call}", flush=True))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
