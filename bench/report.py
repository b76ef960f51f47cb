#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The benchmark report: one run of every figure bench/README.md shows, written as its tables
and plots.

    python3 bench/report.py

It builds fieldlog_bench and fieldlog_latency in build/ (configuring a Release build there if
there is none), then measures, one after the other:

- instructions per call, fieldlog and spdlog, by callgrind (bench/instructions.py);
- CPU time and allocations per call, and async throughput, from one Google Benchmark run with
  the repetitions interleaved (bench/compare.py);
- the async caller's latency percentiles (fieldlog_latency, bench/latency.cpp; with
  --quill-include, fieldlog_quill_latency, the same with quill beside fieldlog's template, and
  quill's caller instructions from fieldlog_quill_bench);
- the compile cost of a logging header and statement (bench/compile_cost.py).

The figures go to bench/results/data.json; from them it writes the PNG plots in bench/results/
and the generated blocks of bench/README.md, README.md and docs/compile-cost.md (between
`<!-- report.py: begin NAME -->` and `<!-- report.py: end NAME -->`). `--from-data` writes the
tables and plots again from data.json without measuring; `--only` measures some parts and keeps
the others from data.json. Plots need matplotlib (Debian: python3-matplotlib).
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import compare  # noqa: E402  (bench/compare.py: the Google Benchmark run and its medians)
import compile_cost  # noqa: E402  (bench/compile_cost.py: its Markdown table)
import instructions  # noqa: E402  (bench/instructions.py: callgrind counts)

PARTS = ("instructions", "time", "latency", "compile_cost")

# Workloads measured for both systems, in the order the tables show them.
PAIRED_INSTRUCTIONS = ["static_msg/null", "fields_10/null", "ctx_10/null", "request_8/null",
                       "fields_10/async", "request_8/async", "request_scope/async/threads:1"]
# fieldlog alone: one request (3 context fields, 3 records) with its context attached four ways,
# then features that have no spdlog counterpart.
CONTEXT_INSTRUCTIONS = ["request_ctx_inline/null", "request_ctx_with/null", "request_ctx_scope/null",
                        "request_ctx_capture/null"]
FEATURE_INSTRUCTIONS = ["scope_10/null", "with_3/null", "static_msg/null_otel", "fields_10/null_otel",
                        "request_8_redact3/null", "debug_8/null", "backtrace_8/null"]
# The request_7 line as a message template and as a brace list (fieldlog), and as quill's named
# arguments (fieldlog_quill_bench, with --quill-include).
TEMPLATE_INSTRUCTIONS = ["request_7t/null", "request_7/null", "request_7t/async", "request_7/async"]
QUILL_INSTRUCTIONS = "quill/request_7/async"
# Its async rows timed end to end (the loop ends when the writer has written everything): the
# records per second a writer thread sustains. Each writes the same number of records
# (bench/README.md says why).
TEMPLATE_TIME = ["fieldlog/request_7t/async", "fieldlog/request_7/async", QUILL_INSTRUCTIONS]
THROUGHPUT_RECORDS = 1_000_000
# Calling thread's CPU time per call.
SYNC_TIME = ["static_msg/null", "fields_10/null", "ctx_10/null", "scope_10/null", "request_8/null",
             "disabled/null", "fields_10/null/threads:2", "static_msg/file", "fields_10/file", "ctx_10/file",
             "fields_10/udp"]
# Wall-clock time per record with the writer thread behind: sustained throughput.
ASYNC_TIME = ["fields_10/async", "request_8/async", "request_scope/async/threads:1",
              "request_scope/async/threads:2"]
TIMESTAMP_FILTER = "/timestamp/"

# What the README's small table calls each workload.
README_ROWS = [("static_msg/null", "constant message"), ("fields_10/null", "10 fields, ~1.5 KB"),
               ("ctx_10/null", "10 bound fields"), ("disabled/null", "level disabled")]

COLOURS = {"fieldlog": "#1f77b4", "spdlog": "#ff7f0e", "quill": "#2ca02c"}


def log(message):
    print(f"report: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Measuring


def build(build_dir, quill_include):
    """Builds the benchmark binaries (with quill's when `quill_include` names its headers);
    configures a Release build first if there is none."""
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.exists(cache):
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                        "-DFIELDLOG_BUILD_BENCH=ON", "-DFIELDLOG_BUILD_TESTS=OFF",
                        "-DFIELDLOG_BUILD_EXAMPLES=OFF"], check=True, stdout=subprocess.DEVNULL)
    with open(cache, encoding="utf-8") as f:
        text = f.read()
    if not re.search(r"^FIELDLOG_BUILD_BENCH:BOOL=(ON|TRUE|1)$", text, re.M):
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, "-DFIELDLOG_BUILD_BENCH=ON"], check=True,
                       stdout=subprocess.DEVNULL)
    build_type = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", text, re.M)
    if not build_type or build_type.group(1) != "Release":
        sys.exit(f"report: {build_dir} is not a Release build")
    targets = ["fieldlog_bench", "fieldlog_latency"]
    if quill_include:
        subprocess.run(["cmake", "-S", ROOT, "-B", build_dir, f"-DFIELDLOG_QUILL_INCLUDE={os.path.abspath(quill_include)}"],
                       check=True, stdout=subprocess.DEVNULL)
        targets += ["fieldlog_quill_bench", "fieldlog_quill_latency"]
    subprocess.run(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 1), "--target", *targets], check=True,
                   stdout=subprocess.DEVNULL)
    compiler = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.*)$", text, re.M)
    return compiler.group(1) if compiler else "c++"


def exact(names):
    """A filter for these benchmarks, at a fixed count too (which adds `/iterations:N`)."""
    return "^(" + "|".join(re.escape(n) for n in names) + r")(/iterations:[0-9]+)?$"


def measure_instructions(bench, quill_bench, quick):
    names = [f"{s}/{w}" for w in PAIRED_INSTRUCTIONS for s in ("fieldlog", "spdlog")]
    names += [f"fieldlog/{w}" for w in CONTEXT_INSTRUCTIONS + FEATURE_INSTRUCTIONS + TEMPLATE_INSTRUCTIONS]
    listed = instructions.list_benchmarks(bench, exact(names))
    low, high = (200, 400) if quick else (2000, 4000)
    counted = instructions.measure(bench, listed, low, high, lambda name, n: log(f"instructions {name} {n}"))
    if quill_bench:
        listed = instructions.list_benchmarks(quill_bench, exact([QUILL_INSTRUCTIONS]))
        counted.update(instructions.measure(quill_bench, listed, low, high,
                                            lambda name, n: log(f"instructions {name} {n}")))
    return counted


def measure_time(bench, quill_bench, quick, repetitions, min_time):
    names = [f"{s}/{w}" for w in SYNC_TIME + ASYNC_TIME for s in ("fieldlog", "spdlog")]
    pattern = f"{exact(names)}|{re.escape(TIMESTAMP_FILTER)}"
    records = THROUGHPUT_RECORDS
    if quick:
        repetitions, min_time, records = 1, 0.01, THROUGHPUT_RECORDS // 100
    log(f"Google Benchmark, {repetitions} interleaved repetitions, min time {min_time} s; "
        f"the template rows {records:,} records each")
    report = compare.run_benchmarks(bench, pattern, repetitions, min_time, True)
    if not report.get("benchmarks"):
        sys.exit(f"report: fieldlog_bench ran no benchmark for {pattern!r}")
    runs = [report, compare.run_benchmarks(bench, exact(TEMPLATE_TIME[:2]), repetitions, None, True, records)]
    if quill_bench:
        runs.append(compare.run_benchmarks(quill_bench, exact([QUILL_INSTRUCTIONS]), repetitions, None, True, records))
    rows = {}
    for run in runs:
        cpu = compare.collect(run, repetitions, "cpu")
        real = compare.collect(run, repetitions, "real")
        rows.update({name: {"cpu_ns": cpu[name][0], "real_ns": real[name][0], "allocs": cpu[name][1]} for name in cpu})
    context = report.get("context", {})
    return {"rows": rows, "repetitions": repetitions, "min_time": min_time, "throughput_records": records,
            "num_cpus": context.get("num_cpus"), "mhz_per_cpu": context.get("mhz_per_cpu")}


LATENCY_ROW = re.compile(r"^\| ([^|]+?) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$")


def measure_latency(latency, quick):
    command = [latency, "--markdown"] + (["--bursts", "100"] if quick else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        match = LATENCY_ROW.match(line.strip())
        if match:
            system, threads, *figures = match.groups()
            rows.append(dict(system=system, threads=int(threads),
                             **dict(zip(("p50", "p90", "p99", "p99.9", "max"), map(float, figures)))))
    if not rows:
        sys.exit(f"report: no percentiles in fieldlog_latency's output:\n{out}")
    shape = re.search(r"(\d+) bursts x (\d+) calls per thread, (\d+) us pause", out)
    timer = re.search(r"includes ~(\d+) ns of timer reads", out)
    if not shape or not timer:
        sys.exit(f"report: fieldlog_latency's output has changed:\n{out}")
    return {"rows": rows, "bursts": int(shape.group(1)), "burst": int(shape.group(2)),
            "pause_us": int(shape.group(3)), "timer_ns": int(timer.group(1))}


def measure_compile_cost(quick, statements, quill_include):
    with tempfile.TemporaryDirectory(prefix="report.") as tmp:
        out = os.path.join(tmp, "compile_cost.json")
        command = [sys.executable, os.path.join(HERE, "compile_cost.py"), "--json", out,
                   "--markdown", os.path.join(tmp, "table.md"), "--statements", str(5 if quick else statements)]
        if quick:
            command += ["--compilers", "g++"]
        if quill_include:
            command += ["--quill-include", quill_include]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
    if quill_include:
        report["quill_version"] = quill_version(quill_include)
    return report


def quill_version(include):
    """quill's version from its Backend.h (VersionMajor, VersionMinor, VersionPatch)."""
    try:
        with open(os.path.join(include, "quill", "Backend.h"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    parts = [re.search(rf"Version{part}\{{(\d+)\}}", text) for part in ("Major", "Minor", "Patch")]
    return ".".join(p.group(1) for p in parts) if all(parts) else None


def package_version(name):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    return re.sub(r"^\d+:", "", out.stdout).split("+")[0].split("-")[0] or None if out.returncode == 0 else None


def machine(compiler):
    model = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            found = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = found.group(1).strip() if found else model
    except OSError:
        pass
    first = subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    # "c++ (Debian 12.2.0-14) 12.2.0" names the driver, not the compiler.
    name = "clang" if first and "clang" in first[0] else "g++"
    number = re.search(r"(\d+\.\d+(\.\d+)?)\s*$", first[0]) if first else None
    return {"cpu": model, "cores": os.cpu_count(), "load": round(os.getloadavg()[0], 1),
            "compiler": f"{name} {number.group(1)}" if number else compiler, "os": platform.platform(terse=True),
            "spdlog": package_version("libspdlog-dev"), "fmt": package_version("libfmt-dev"),
            "date": datetime.date.today().isoformat()}


# ---------------------------------------------------------------------------------------------
# Tables


def thousands(n):
    return "-" if n is None else f"{n:,}"


def ratio(theirs, ours):
    return f"{theirs / ours:.1f}x" if theirs and ours else "-"


def caller_label(workload):
    return workload + (" (caller)" if "/async" in workload else "")


def instruction_tables(data):
    figures = data["instructions"]
    timed = data.get("time", {}).get("rows", {})

    def rate(name):
        """Records per second from a row's wall-clock time per record, or - when it was not timed."""
        ns = timed.get(name, {}).get("real_ns")
        return f"{1e9 / ns / 1e6:.2f} M" if ns else "-"

    out = ["| benchmark | fieldlog | spdlog | spdlog/fieldlog |", "|---|---:|---:|---:|"]
    for w in PAIRED_INSTRUCTIONS:
        ours, theirs = figures.get(f"fieldlog/{w}"), figures.get(f"spdlog/{w}")
        label = caller_label(w)
        out.append(f"| {label} | {thousands(ours)} | {thousands(theirs)} | {ratio(theirs, ours)} |")
    inline = figures.get("fieldlog/request_ctx_inline/null")
    out += ["", "fieldlog alone, one request (3 context fields, then 3 records) with its context attached "
            "four ways:", "", "| benchmark | instructions | against inline |", "|---|---:|---:|"]
    for w in CONTEXT_INSTRUCTIONS:
        n = figures.get(f"fieldlog/{w}")
        out.append(f"| {w} | {thousands(n)} | {f'{n / inline:.2f}x' if n and inline else '-'} |")
    out += ["", "fieldlog alone, features spdlog has no counterpart for:", "",
            "| benchmark | instructions |", "|---|---:|"]
    for w in FEATURE_INSTRUCTIONS:
        out.append(f"| {w} | {thousands(figures.get(f'fieldlog/{w}'))} |")
    if any(f"fieldlog/{w}" in figures for w in TEMPLATE_INSTRUCTIONS):
        quill = figures.get(QUILL_INSTRUCTIONS)
        out += ["", "The `request_7` line (7 values: a C string, two strings, an int, a double, an unsigned, a bool) "
                "as a message template (`request_7t`), as a brace list with a fmt message of the same text "
                "(`request_7`), and as quill's named arguments" + ("" if quill else " (left out: the run was not "
                "given `--quill-include`)") + ". Records per second: "
                + (f"each form writes the same {data['time']['throughput_records']:,} records to a file"
                   if data.get("time", {}).get("throughput_records") else "not measured in this run") + ".", "",
                "| form | instructions, sync, null sink | instructions, async, the caller | "
                "records/s, async to a file, end to end |", "|---|---:|---:|---:|",
                f"| fieldlog, template | {thousands(figures.get('fieldlog/request_7t/null'))} | "
                f"{thousands(figures.get('fieldlog/request_7t/async'))} | {rate('fieldlog/request_7t/async')} |",
                f"| fieldlog, brace list | {thousands(figures.get('fieldlog/request_7/null'))} | "
                f"{thousands(figures.get('fieldlog/request_7/async'))} | {rate('fieldlog/request_7/async')} |"]
        if quill:
            out.append(f"| quill | - | {thousands(quill)} | {rate(QUILL_INSTRUCTIONS)} |")
    return "\n".join(out)


def time_cell(ns):
    if ns is None:
        return "-"
    return f"{ns:.1f}" if ns < 100 else f"{ns:,.0f}"


def allocs_cell(allocs):
    return compare.fmt_allocs(allocs)


def time_table(rows, workloads, clock):
    out = ["| benchmark | fieldlog ns/op | spdlog ns/op | spdlog/fieldlog | fieldlog allocs/op | spdlog allocs/op |",
           "|---|---:|---:|---:|---:|---:|"]
    for w in workloads:
        ours, theirs = rows.get(f"fieldlog/{w}"), rows.get(f"spdlog/{w}")
        if not ours and not theirs:
            continue
        a = ours[clock] if ours else None
        b = theirs[clock] if theirs else None
        out.append(f"| {w} | {time_cell(a)} | {time_cell(b)} | {ratio(b, a)} | "
                   f"{allocs_cell(ours['allocs'] if ours else None)} | "
                   f"{allocs_cell(theirs['allocs'] if theirs else None)} |")
    return "\n".join(out)


def timestamp_table(rows):
    out = ["| benchmark | ns | allocs |", "|---|---:|---:|"]
    for name, row in rows.items():
        if TIMESTAMP_FILTER in name:
            out.append(f"| `{name}` | {time_cell(row['cpu_ns'])} | {allocs_cell(row['allocs'])} |")
    return "\n".join(out)


def latency_table(latency):
    out = ["| system | threads | p50 | p90 | p99 | p99.9 | max |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in latency["rows"]:
        out.append(f"| {r['system']} | {r['threads']} | " +
                   " | ".join(f"{r[k]:,.0f}" for k in ("p50", "p90", "p99", "p99.9", "max")) + " |")
    return "\n".join(out)


def held(condition):
    return ": held" if condition else ": not held"


def compile_targets(report):
    """The compile-cost targets, each with what this run measured."""
    headers, costs = report["headers"], report["statements_cost"]
    compilers = list(report["compilers"])
    short = {c: os.path.basename(c) for c in compilers}
    ours, spd = headers.get("fieldlog"), headers.get("spdlog")
    out = ["| target | measured |", "|---|---|"]
    if ours and spd:
        share = 100 * ours["lines"] / spd["lines"]
        out.append(f"| `log.hpp` at most 60 % of `spdlog.h`'s preprocessed lines | "
                   f"{ours['lines']:,} of {spd['lines']:,}: {share:.0f} %{held(share <= 60)} |")
        empty = "; ".join(f"{short[c]} {ours['empty_tu'][c]['seconds']:.2f} s vs {spd['empty_tu'][c]['seconds']:.2f} s"
                          for c in compilers)
        faster = all(ours["empty_tu"][c]["seconds"] <= spd["empty_tu"][c]["seconds"] for c in compilers)
        out.append(f"| a file with `log.hpp` and no statement compiles no slower than one with `spdlog.h` | "
                   f"{empty}{held(faster)} |")
    for layout, rows in costs.items():
        peers = [v for v in ("spdlog", "quill") if v in rows]
        if not peers:
            continue
        parts = []
        for c in compilers:
            ms = lambda v: f"{rows[v][c]['ms_per_statement']:.1f}"  # noqa: E731
            parts.append(f"{short[c]}: fmt {ms('fieldlog fmt')}, fields {ms('fieldlog fields')} vs "
                         + ", ".join(f"{p} {ms(p)}" for p in peers) + " ms")
        ms_of = lambda v, c: rows[v][c]["ms_per_statement"]  # noqa: E731
        below = all(max(ms_of("fieldlog fmt", c), ms_of("fieldlog fields", c)) <= min(ms_of(p, c) for p in peers)
                    for c in compilers)
        out.append(f"| both call forms at or below spdlog's and quill's time per statement ({layout}) | "
                   + "; ".join(parts) + held(below) + " |")
        text = "; ".join(f"{short[c]}: fmt {rows['fieldlog fmt'][c]['text_per_statement']:,.0f}, fields "
                         f"{rows['fieldlog fields'][c]['text_per_statement']:,.0f} bytes" for c in compilers)
        out.append(f"| `.text` per statement ({layout}) | {text} |")
    return "\n".join(out)


def compile_block(data, plot_path):
    report = data["compile_cost"]
    versions = "; ".join(report["compilers"].values())
    if "quill" in report["headers"]:
        version = f" {report['quill_version']}" if report.get("quill_version") else ""
        quill = f" quill{version}."
    else:
        quill = " quill is left out: the run was not given `--quill-include`."
    return "\n".join([
        f"![Compile time per statement]({plot_path})", "",
        compile_cost.markdown(report).rstrip(), "",
        f"Compilers: {versions}.{quill}", "",
        "Targets:", "", compile_targets(report)])


def machine_sentence(data):
    m = data["machine"]
    libs = ", ".join(f"{k} {m[k]}" for k in ("fmt", "spdlog") if m.get(k))
    return (f"One run on {m['date']}: {m['cores']} cores ({m['cpu']}), load average {m['load']} at the start; "
            f"{m['compiler']}, Release; {libs}.")


def bench_readme_block(data):
    t = data["time"]
    rows = t["rows"]
    return "\n".join([
        machine_sentence(data), "",
        "### Instructions per call", "",
        "Counted by callgrind for the calling thread; the same binary repeats them within 0.1 %.", "",
        "![Instructions per call, fieldlog and spdlog](results/instructions.png)", "",
        instruction_tables(data), "",
        "### Time and allocations per call", "",
        "CPU time of the calling thread per call"
        + (f", medians of {t['repetitions']} interleaved repetitions. " if t["repetitions"] > 1 else ", one repetition. ")
        + 
        "The machine is shared: times move by up to a half between runs, ratios less.", "",
        "![Time per call, fieldlog and spdlog](results/ns_per_op.png)", "",
        time_table(rows, SYNC_TIME, "cpu_ns"), "",
        "Async, a file sink behind the writer thread: wall-clock time per record, so sustained throughput.", "",
        time_table(rows, ASYNC_TIME, "real_ns"), "",
        "### Async: the caller's latency", "",
        f"`fieldlog_latency`: {data['latency']['bursts']:,} bursts of {data['latency']['burst']} calls per "
        f"thread, {data['latency']['pause_us']} µs of pause after each, to a file: the `request_8` line, "
        "and for `fieldlog tpl` (a message template) and quill (named arguments) the `request_7` line. "
        f"Nanoseconds per call; each sample includes about {data['latency']['timer_ns']} ns of timer reads.", "",
        "![Caller latency percentiles](results/latency.png)", "",
        latency_table(data["latency"]), "",
        "### Timestamps", "",
        "One RFC 3339 UTC timestamp with 9 fraction digits per call, CPU time.", "",
        timestamp_table(rows), "",
        "### Compile cost", "",
        "What a logging header and each statement cost the compiler; "
        "[docs/compile-cost.md](../docs/compile-cost.md) explains the workload and the figures.", "",
        compile_block(data, "results/compile_cost.png")])


def readme_block(data):
    instr, rows = data["instructions"], data["time"]["rows"]
    out = ["Against spdlog, both writing the same JSON line to a sink that drops it. " + machine_sentence(data)
           + " [bench/README.md](bench/README.md) has every table, and how each figure is made.", "",
           "![Instructions per call, fieldlog and spdlog](bench/results/instructions.png)", "",
           "| workload | fieldlog instructions/call | spdlog | fieldlog ns/call | spdlog | fieldlog allocs | spdlog |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for key, label in README_ROWS:
        ours, theirs = rows.get(f"fieldlog/{key}"), rows.get(f"spdlog/{key}")
        i_ours, i_theirs = instr.get(f"fieldlog/{key}"), instr.get(f"spdlog/{key}")
        out.append(f"| {label} | {thousands(i_ours) if i_ours else '—'} | {thousands(i_theirs) if i_theirs else '—'} | "
                   f"{time_cell(ours['cpu_ns'] if ours else None)} | {time_cell(theirs['cpu_ns'] if theirs else None)} | "
                   f"{allocs_cell(ours['allocs'] if ours else None)} | {allocs_cell(theirs['allocs'] if theirs else None)} |")
    return "\n".join(out)


def block_pattern(name):
    begin, end = f"<!-- report.py: begin {name} -->", f"<!-- report.py: end {name} -->"
    return begin, end, re.compile(re.escape(begin) + r"\n(.*?)\n?" + re.escape(end), re.S)


def replace_block(path, name, body):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin, end, pattern = block_pattern(name)
    if not pattern.search(text):
        sys.exit(f"report: {path} has no block `{begin}` … `{end}`")
    text = pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def block_differs(path, name, body):
    """Whether the block in `path` is other than `body`: edited by hand, or data.json changed."""
    with open(path, encoding="utf-8") as f:
        found = block_pattern(name)[2].search(f.read())
    return found is None or found.group(1) != body


def blocks(data):
    """(document, block name, text) for every generated block."""
    return [("bench/README.md", "results", bench_readme_block(data)),
            ("README.md", "comparison", readme_block(data)),
            ("docs/compile-cost.md", "table", compile_block(data, "../bench/results/compile_cost.png"))]


# ---------------------------------------------------------------------------------------------
# Plots


def pyplot():
    try:
        import matplotlib
    except ImportError:
        sys.exit("report: the plots need matplotlib (Debian: apt-get install python3-matplotlib, "
                 "then run with Debian's /usr/bin/python3)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "fieldlog", "figure.dpi": 100})
    return plt


def paired_bars(plt, path, title, unit, labels, series):
    """Horizontal bars, one group per workload, one bar per system, log scale."""
    fig, ax = plt.subplots(figsize=(7, 0.55 * len(labels) + 1.2))
    height = 0.8 / len(series)
    for i, (system, values) in enumerate(series.items()):
        ys = [n + i * height for n in range(len(labels))]
        shown = [v or 0 for v in values]
        ax.barh(ys, shown, height=height, label=system, color=COLOURS.get(system))
        for y, v in zip(ys, values):
            if v:
                ax.text(v * 1.05, y, f"{v:,.0f}" if v >= 10 else f"{v:.1f}", va="center", fontsize=7)
    ax.set_yticks([n + height * (len(series) - 1) / 2 for n in range(len(labels))])
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(f"{unit} (log scale; lower is better)")
    ax.set_title(title)
    ax.legend(loc="upper right")
    right = max(v for values in series.values() for v in values if v)
    ax.set_xlim(right=right * 4)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def plots(data, results):
    plt = pyplot()
    os.makedirs(results, exist_ok=True)
    instr = data["instructions"]
    paired_bars(plt, os.path.join(results, "instructions.png"), "Instructions per call (callgrind)",
                "instructions per call", [caller_label(w) for w in PAIRED_INSTRUCTIONS],
                {s: [instr.get(f"{s}/{w}") for w in PAIRED_INSTRUCTIONS] for s in ("fieldlog", "spdlog")})
    rows = data["time"]["rows"]
    paired = [w for w in SYNC_TIME if f"spdlog/{w}" in rows and f"fieldlog/{w}" in rows]
    paired_bars(plt, os.path.join(results, "ns_per_op.png"), "CPU time per call", "ns per call", paired,
                {s: [rows[f"{s}/{w}"]["cpu_ns"] for w in paired] for s in ("fieldlog", "spdlog")})

    latency = data["latency"]["rows"]
    thread_counts = sorted({r["threads"] for r in latency})
    fig, axes = plt.subplots(1, len(thread_counts), figsize=(7, 3.2), sharey=True, squeeze=False)
    keys = ("p50", "p90", "p99", "p99.9")
    styles = {"fieldlog sync": ("#aec7e8", "o"), "fieldlog async": (COLOURS["fieldlog"], "s"),
              "spdlog async": (COLOURS["spdlog"], "^"), "fieldlog tpl": ("#17becf", "D"),
              "quill": (COLOURS["quill"], "v")}
    for ax, threads in zip(axes[0], thread_counts):
        for r in (r for r in latency if r["threads"] == threads):
            colour, marker = styles.get(r["system"], ("grey", "x"))
            ax.plot(keys, [r[k] for k in keys], marker=marker, color=colour, label=r["system"])
        ax.set_yscale("log")
        ax.set_title(f"{threads} caller thread{'s' if threads > 1 else ''}")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel("ns per call (log scale; lower is better)")
    axes[0][-1].legend(loc="upper left")
    fig.suptitle("The caller's latency per call, request line to a file")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "latency.png"), metadata={"Software": None})
    plt.close(fig)

    report = data["compile_cost"]
    layout = next(iter(report["statements_cost"]))
    forms = list(report["statements_cost"][layout])
    compilers = list(report["compilers"])
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(forms) * len(compilers) + 1.2))
    labels, values, colours = [], [], []
    for form in forms:
        for c in compilers:
            labels.append(f"{form}, {os.path.basename(c)}")
            values.append(report["statements_cost"][layout][form][c]["ms_per_statement"])
            colours.append(COLOURS.get(form.split()[0], "grey"))
    ax.barh(range(len(labels)), values, color=colours)
    for y, v in enumerate(values):
        ax.text(max(v, 0) + 0.3, y, f"{v:.1f}", va="center", fontsize=7)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("compile ms per logging statement (-O2; lower is better)")
    ax.set_title(f"Compile time per statement, statements in {layout}")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "compile_cost.png"), metadata={"Software": None})
    plt.close(fig)


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the CMake build directory")
    parser.add_argument("--only", nargs="+", choices=PARTS, help="measure these parts; keep the rest from data.json")
    parser.add_argument("--from-data", action="store_true", help="measure nothing: write tables and plots from data.json")
    parser.add_argument("--repetitions", type=int, default=5, help="Google Benchmark repetitions (default 5)")
    parser.add_argument("--min-time", type=float, default=0.2, help="--benchmark_min_time in seconds (default 0.2)")
    parser.add_argument("--statements", type=int, default=500, help="compile_cost.py's N (default 500)")
    parser.add_argument("--quill-include",
                        help="quill's include directory: quill in the compile-cost table and beside fieldlog's templates")
    parser.add_argument("--quick", action="store_true",
                        help="tiny counts, to check the script; writes into --out, not the repository")
    parser.add_argument("--out", default=ROOT,
                        help="the tree whose README.md, bench/ and docs/ are written (default: this repository)")
    parser.add_argument("--check", action="store_true",
                        help="measure and write nothing: fail if a generated block is not what data.json gives")
    args = parser.parse_args()
    if args.check:
        with open(os.path.join(HERE, "results", "data.json"), encoding="utf-8") as f:
            data = json.load(f)
        stale = [f"{doc} ({name})" for doc, name, body in blocks(data)
                 if block_differs(os.path.join(ROOT, doc), name, body)]
        if stale:
            print("report: these blocks are not what bench/results/data.json gives; run "
                  "`python3 bench/report.py --from-data`: " + ", ".join(stale), file=sys.stderr)
            return 1
        print("report: every generated block matches bench/results/data.json")
        return 0
    if args.quick and os.path.realpath(args.out) == os.path.realpath(ROOT):
        parser.error("--quick needs --out DIR: its figures are not for the repository")
    pyplot()  # fail before measuring, not after

    out = os.path.abspath(args.out)
    documents = ["README.md", "bench/README.md", "docs/compile-cost.md"]
    for doc in documents:
        target = os.path.join(out, doc)
        if not os.path.exists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(os.path.join(ROOT, doc), encoding="utf-8") as src, open(target, "w", encoding="utf-8") as dst:
                dst.write(src.read())
    results = os.path.join(out, "bench", "results")
    data_path = os.path.join(results, "data.json")
    data = {}
    if os.path.exists(data_path):
        with open(data_path, encoding="utf-8") as f:
            data = json.load(f)

    parts = [] if args.from_data else (args.only or list(PARTS))
    if parts:
        compiler = build(args.build, args.quill_include)
        bench = os.path.join(args.build, "bench", "fieldlog_bench")
        quill_bench = os.path.join(args.build, "bench", "fieldlog_quill_bench") if args.quill_include else None
        latency = os.path.join(args.build, "bench",
                               "fieldlog_quill_latency" if args.quill_include else "fieldlog_latency")
        data["machine"] = machine(compiler)
        measures = {
            "instructions": lambda: measure_instructions(bench, quill_bench, args.quick),
            "time": lambda: measure_time(bench, quill_bench, args.quick, args.repetitions, args.min_time),
            "latency": lambda: measure_latency(latency, args.quick),
            "compile_cost": lambda: measure_compile_cost(args.quick, args.statements, args.quill_include),
        }
        os.makedirs(results, exist_ok=True)
        for part in parts:
            log(part)
            data[part] = measures[part]()
            # Saved after each part, so that a failure later keeps what was measured (--only).
            with open(data_path, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1)
                f.write("\n")
    missing = [p for p in PARTS + ("machine",) if p not in data]
    if missing:
        sys.exit(f"report: {data_path} lacks {', '.join(missing)}: run without --only/--from-data first")

    plots(data, results)
    for doc, name, body in blocks(data):
        replace_block(os.path.join(out, doc), name, body)
    log(f"wrote {', '.join(documents)} and {os.path.relpath(results, out)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
