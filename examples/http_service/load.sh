#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Loads the example service with wrk on loopback, with fieldlog (its request context in a Scope,
# and in with() children) and with spdlog (all async, JSON lines to a file, the same records),
# plus a baseline with logging off, and prints one table:
# requests/s and latency percentiles as wrk measured them (medians over the rounds), the CPU time
# the service process used per request (user + system, from /proc), heap allocations per request
# as the service counted them (from /metrics before and after each measured run), and the log
# lines written and dropped; then the CPU per request by thread kind, from each thread's
# /proc stat: the threads that log (the service's connection and settlement threads, named
# http-connection and http-settle), the logger's own (every thread the service did not name:
# fieldlog-writer and fieldlog's other threads, spdlog's worker) and the rest (http-main,
# http-signals), each as the median of the rounds and their range.
#
#   examples/http_service/load.sh [--service PATH] [--rounds 9] [--duration 5] [--connections 16]
#                                 [--wrk-threads 2] [--no-baseline]
#
# Each run starts the service, warms it up for 1 s (every thread), scrapes /metrics, runs wrk, scrapes again,
# sends SIGTERM (the service drains and closes its log) and counts the lines in its log file.
# The runs of a round alternate their order from round to round, so a drift in the machine's
# background load does not favour one logger.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
service="$here/../../build/examples/fieldlog_http_service"
rounds=9
duration=5
connections=16
wrk_threads=2
baseline=1
while (($#)); do
  case "$1" in
    --service) service=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --wrk-threads) wrk_threads=$2; shift 2 ;;
    --no-baseline) baseline=0; shift ;;
    *) sed -n '15,16p' "$0" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "load.sh: wrk is not installed (Debian package wrk; bash .ci/deps)" >&2; exit 1; }
[ -x "$service" ] || { echo "load.sh: no service binary at $service (build the target fieldlog_http_service)" >&2; exit 1; }
service=$(realpath "$service")

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

scrape() {
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:$1/metrics"
}

# run SETUP ROUND: one measured run; leaves $work/SETUP.ROUND.{before,after,wrk,lines,last}.
run() {
  local setup=$1 round=$2 logger=$1 level="" context=scope
  local dir="$work/$setup.$round" out="$work/$setup.$round"
  if [ "$setup" = none ]; then logger=fieldlog level=off; fi
  if [ "$setup" = fieldlog-with ]; then logger=fieldlog context=with; fi
  mkdir -p "$dir/logs"
  rm -f "$work/port"
  (cd "$dir" && FIELDLOG_LEVEL=$level exec "$service" --logger="$logger" --context="$context" --config="$here/load.toml" \
     --log-file="logs/$logger.log" --port=0 --port-file="$work/port" --threads=$((connections + 8)) \
     >"$dir/stdout" 2>"$dir/stderr") &
  pid=$!
  for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
  [ -s "$work/port" ] || { echo "load.sh: the $setup service did not start:" >&2; cat "$dir/stderr" >&2; exit 1; }
  local port url
  port=$(cat "$work/port")
  url="http://127.0.0.1:$port/transactions"
  # Warm-up with a connection per service thread, so that every thread has logged (made its
  # per-thread state, filled its context pool) before the measured run picks 16 of them.
  wrk -t"$wrk_threads" -c"$((connections + 8))" -d1s -s "$here/post.lua" "$url" >/dev/null
  scrape "$port" >"$out.before"
  cat "/proc/$pid/stat" >"$out.stat-before"
  cat /proc/"$pid"/task/*/stat >"$out.tasks-before" 2>/dev/null || true
  wrk -t"$wrk_threads" -c"$connections" -d"${duration}s" -s "$here/post.lua" "$url" >"$out.wrk"
  cat "/proc/$pid/stat" >"$out.stat-after"
  cat /proc/"$pid"/task/*/stat >"$out.tasks-after" 2>/dev/null || true
  scrape "$port" >"$out.after"
  kill -TERM "$pid"
  wait "$pid" || { echo "load.sh: the $setup service exited with status $?" >&2; exit 1; }
  pid=""
  cat "$dir"/logs/* 2>/dev/null | wc -l >"$out.lines"
  (tail -q -n 1 "$dir"/logs/*.log 2>/dev/null || true) >"$out.last"
  # Deleted at once, its dirty pages are dropped rather than written back while the next round
  # writes: writeback made a logger thread's CPU per request vary from round to round.
  rm -rf "$dir/logs"
}

setups=(fieldlog fieldlog-with spdlog)
((baseline)) && setups+=(none)
echo "== load: wrk -t$wrk_threads -c$connections, POST /transactions on loopback, $rounds rounds of ${duration}s per" \
     "setup, $(nproc) cores" >&2
for ((round = 1; round <= rounds; round++)); do
  order=("${setups[@]}")
  if ((round % 2 == 0)); then order=($(printf '%s\n' "${setups[@]}" | tac)); fi
  for setup in "${order[@]}"; do
    echo "   round $round: $setup" >&2
    run "$setup" "$round"
  done
done

python3 - "$work" "$rounds" "${setups[@]}" <<'PY'
import collections, json, os, re, statistics, sys

work, rounds, setups = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def metrics(path):
    values = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        values[name] = float(value)
    return values

def stat_cpu(line):
    """The name and CPU seconds (user + system) of a /proc/.../stat line: the name is between the
    parentheses, utime and stime the 14th and 15th fields, counted after the closing one."""
    name = line[line.index("(") + 1:line.rindex(")")]
    fields = line.rsplit(")", 1)[1].split()
    return name, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def cpu_seconds(path):
    return stat_cpu(open(path).read())[1]

KINDS = ("callers", "logger", "rest")
def kind_of(name):
    if name in ("http-connection", "http-settle"):
        return "callers"
    return "rest" if name.startswith("http-") else "logger"

def cpu_by_kind(base):
    """CPU seconds each kind of thread used during the measured run (a thread started during it
    counts from zero)."""
    def threads(path):
        out = {}
        for line in open(path):
            if line.strip():
                tid = line.split(" ", 1)[0]
                out[tid] = stat_cpu(line)
        return out
    before, after = threads(f"{base}.tasks-before"), threads(f"{base}.tasks-after")
    used = dict.fromkeys(KINDS, 0.0)
    for tid, (name, seconds) in after.items():
        used[kind_of(name)] += seconds - before.get(tid, (name, 0.0))[1]
    return used

def one_run(setup, round):
    base = f"{work}/{setup}.{round}"
    before, after = metrics(f"{base}.before"), metrics(f"{base}.after")
    delta = lambda name: after.get(name, 0) - before.get(name, 0)
    wrk_out = open(f"{base}.wrk").read()
    wrk = dict(re.findall(r"(\w+)=(\d+)", wrk_out.split("WRK_RESULT", 1)[1].split("\n", 1)[0]))
    wrk = {k: int(v) for k, v in wrk.items()}
    histogram = collections.Counter()
    for bucket in wrk_out.split("WRK_LATENCY", 1)[1].split("\n", 1)[0].split():
        value, count = bucket.split(":")
        histogram[int(value)] += int(count)
    lines = int(open(f"{base}.lines").read())
    last = open(f"{base}.last").read().strip()
    last = json.loads(last) if last else {}
    # The last record, "stopped", counts every record the service logged, itself included.
    logged = last["records"] if last.get("msg") == "stopped" else 0
    return {
        "rps": wrk["requests"] / (wrk["duration_us"] / 1e6),
        "p50": wrk["p50_us"], "p99": wrk["p99_us"], "p999": wrk["p999_us"], "errors": wrk["errors"],
        "served": delta('http_service_requests_total{route="/transactions",code="202"}'),
        "cpu": cpu_seconds(f"{base}.stat-after") - cpu_seconds(f"{base}.stat-before"),
        "kinds": cpu_by_kind(base),
        "allocs": {c: delta(f'http_service_allocations_total{{cause="{c}"}}')
                   for c in ("service", "logging_call", "logger_thread")},
        "lines": lines, "dropped": logged - lines, "histogram": histogram,
    }

def summary(setup):
    runs = [one_run(setup, r) for r in range(1, rounds + 1)]
    served = sum(r["served"] for r in runs)
    per = lambda cause: sum(r["allocs"][cause] for r in runs) / served
    median = lambda key: statistics.median(r[key] for r in runs)
    # Per round, in µs per request: the whole process's CPU and each kind's.
    per_round = lambda cpu: [c / r["served"] * 1e6 for c, r in zip(cpu, runs)]
    histogram = sum((r["histogram"] for r in runs), collections.Counter())
    return {
        "runs": runs, "histogram": histogram,
        "per_round": per_round([r["cpu"] for r in runs]),
        "kinds": {k: per_round([r["kinds"][k] for r in runs]) for k in KINDS},
        "setup": setup, "rps": median("rps"), "p50": median("p50"), "p99": median("p99"), "p999": median("p999"),
        "errors": sum(r["errors"] for r in runs),
        "cpu_us": sum(r["cpu"] for r in runs) / served * 1e6,
        "service": per("service"), "calls": per("logging_call"), "threads": per("logger_thread"),
        "lines": sum(r["lines"] for r in runs), "dropped": sum(r["dropped"] for r in runs),
    }

names = {"fieldlog": "fieldlog (Scope per request)", "fieldlog-with": "fieldlog (with() per request)",
         "spdlog": "spdlog", "none": "none (logging off)"}
def us(v):
    return f"{v / 1000:.2f} ms" if v >= 1000 else f"{v:.0f} µs"
def allocs(v):
    if v == 0:
        return "0"
    return f"{v:.1e}" if v < 0.01 else f"{v:.2f}".rstrip("0").rstrip(".")  # never rounds a nonzero count to 0

def percentile(histogram, p):
    """The latency (µs) that p % of the histogram's requests took at most."""
    total = sum(histogram.values())
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= total * p / 100:
            return value
    return 0

def spread(values):
    return f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})"

rows = {s: summary(s) for s in setups}
print("| logger | requests/s | p50 | p99 | p99.9 | service CPU/req | allocs/req: service | allocs/req: logging (calls + logger threads) | lines written | lines dropped |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for s in setups:
    r = rows[s]
    print(f"| {names[s]} | {r['rps']:.0f} | {us(r['p50'])} | {us(r['p99'])} | {us(r['p999'])} | "
          f"{r['cpu_us']:.1f} µs | {allocs(r['service'])} | {allocs(r['calls'] + r['threads'])} ({allocs(r['calls'])} + {allocs(r['threads'])}) | "
          f"{r['lines']} | {r['dropped']} |")
def compare(ours, theirs, more_is_better):
    """fieldlog's figure against spdlog's, as a ratio above 1 and the word that says which way."""
    if ours == theirs:
        return "the same"
    better = ours > theirs if more_is_better else ours < theirs
    ratio = max(ours, theirs) / min(ours, theirs) if min(ours, theirs) > 0 else float("inf")
    word = ("higher" if ours > theirs else "lower")
    return f"{ratio:.2f}x {word} ({'better' if better else 'worse'})"

f, s = rows["fieldlog"], rows["spdlog"]
print(f"\nfieldlog vs spdlog (medians of {rounds} rounds): requests/s {compare(f['rps'], s['rps'], True)}, "
      f"p99 {compare(f['p99'], s['p99'], False)}, p99.9 {compare(f['p999'], s['p999'], False)}, "
      f"service CPU per request {compare(f['cpu_us'], s['cpu_us'], False)}")
# A round's two runs follow each other, so their ratio leaves out most of the machine's drift
# between rounds; above 1 is fieldlog ahead.
def ahead(key, more_is_better):
    ratios = sorted(a[key] / b[key] if more_is_better else b[key] / a[key] for a, b in zip(f["runs"], s["runs"]))
    wins = sum(r > 1 for r in ratios)
    return f"{statistics.median(ratios):.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f}, ahead in {wins} of {len(ratios)})"
print(f"fieldlog ahead of spdlog, round by round (spdlog's figure over fieldlog's, or fieldlog's over spdlog's "
      f"for requests/s; the median, the range, the rounds above 1): requests/s {ahead('rps', True)}, "
      f"p99 {ahead('p99', False)}, p99.9 {ahead('p999', False)}")
if "none" in rows:
    n = rows["none"]
    # Each round's runs follow each other: the difference within a round leaves out most of the
    # machine's drift between rounds.
    logging = lambda r: [a - b for a, b in zip(r["per_round"], n["per_round"])]
    print(f"CPU per request spent on logging (minus the run with logging off, the median of the rounds' "
          f"differences, their range): fieldlog {spread(logging(f))} µs, spdlog {spread(logging(s))} µs")
    # The tail the machine gives a service that does not log: a logger's p99 and p99.9 over it,
    # round by round, say what the logger added to the tail (1: nothing).
    def over_floor(r, key):
        ratios = sorted(a[key] / b[key] for a, b in zip(r["runs"], n["runs"]))
        return f"{statistics.median(ratios):.2f} ({ratios[0]:.2f}–{ratios[-1]:.2f})"
    print(f"Latency over the run with logging off, round by round (the median, the range): "
          f"fieldlog p99 {over_floor(f, 'p99')}, p99.9 {over_floor(f, 'p999')}; "
          f"spdlog p99 {over_floor(s, 'p99')}, p99.9 {over_floor(s, 'p999')}")
print(f"\nLatency of every round's requests together (wrk's histograms merged): a round with a long tail "
      f"weighs in by how many requests it slowed, not as one round of {rounds}")
print("| logger | samples (requests, and wrk's corrections) | p99 | p99.9 | p99.99 | max |")
print("|---|---:|---:|---:|---:|---:|")
for s_ in setups:
    h = rows[s_]["histogram"]
    print(f"| {names[s_]} | {sum(h.values())} | {us(percentile(h, 99))} | {us(percentile(h, 99.9))} | "
          f"{us(percentile(h, 99.99))} | {us(max(h))} |")
print(f"fieldlog vs spdlog, every round's requests together: p99.9 "
      f"{compare(percentile(f['histogram'], 99.9), percentile(s['histogram'], 99.9), False)}, p99.99 "
      f"{compare(percentile(f['histogram'], 99.99), percentile(s['histogram'], 99.99), False)}")
print(f"\nCPU per request by thread kind, µs: the median of {rounds} rounds (their range)")
print("| logger | whole process | threads that log | the logger's own threads | the rest |")
print("|---|---:|---:|---:|---:|")
for s in setups:
    r = rows[s]
    print(f"| {names[s]} | {spread(r['per_round'])} | {spread(r['kinds']['callers'])} | "
          f"{spread(r['kinds']['logger'])} | {spread(r['kinds']['rest'])} |")
print(f"load average while measuring: {open('/proc/loadavg').read().split()[0]} (the machine's other work adds noise)")
for s in setups:
    if rows[s]["errors"]:
        print(f"note: wrk counted {rows[s]['errors']} errors with {names[s]}")
PY
