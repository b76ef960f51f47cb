#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fieldlog::TraceContext against the OpenTelemetry Go SDK's W3C propagator.

Builds otel_peer/main.go (Debian's golang-opentelemetry-otel-dev, GOPATH mode, offline, its
cache in the build directory) and runs it and fieldlog_trace_peer over the same table of
traceparent/tracestate pairs, one row per spec rule. Each peer extracts every pair and injects
the result again. Checked, per row:
 - fieldlog's verdict (valid or not) is the spec's, as the table states it;
 - where the table names no disagreement, both peers print the same line: the same ids,
   flags and tracestate extracted, and the same headers injected;
 - where it names one, the peers do differ (the SDK's behaviour, not the spec's);
 - both directions: the headers each peer injected, given to the other, extract to what the
   injecting peer extracted.

usage: otel_crosscheck.py FIELDLOG_TRACE_PEER GOPATH WORK_DIR     exit 0 pass, 1 fail, 77 skipped
"""
import os
import shutil
import subprocess
import sys

TID = "4bf92f3577b34da6a3ce929d0e0e4736"
PID = "00f067aa0ba902b7"


def tp(version="00", trace=TID, parent=PID, flags="01", rest=""):
    return f"{version}-{trace}-{parent}-{flags}{rest}"


def members(count, prefix="k"):
    return ",".join(f"{prefix}{i}=v{i}" for i in range(count))


VALID, INVALID = True, False

# (traceparent, tracestate, the spec's verdict on the traceparent, where the Go SDK (1.1.0)
# differs from the spec: empty when it does not).
CASES = [
    # traceparent: what is valid
    (tp(), "", VALID, ""),
    (tp(flags="00"), "", VALID, ""),
    (tp(version="cc"), "", VALID, ""),
    (tp(version="cc", rest="-what-the-future-will-be-like"), "", VALID, ""),
    (tp(version="fe", flags="09", rest="-"), "", VALID, ""),
    (tp(version="01", flags="ff", rest="-x-y"), "", VALID, ""),
    # traceparent: what is not
    ("", "", INVALID, ""),
    ("00", "", INVALID, ""),
    (tp(version="ff"), "", INVALID, ""),
    (tp(version="0A"), "", INVALID, ""),
    (tp(version="g0"), "", INVALID, ""),
    ("000-" + TID + "-" + PID + "-01", "", INVALID, ""),
    (tp(trace=TID.upper()), "", INVALID, ""),
    (tp(trace=TID[:-1] + "g"), "", INVALID, ""),
    (tp(trace="0" * 32), "", INVALID, ""),
    (tp(trace=TID[:-1]), "", INVALID, ""),
    (tp(parent=PID.upper()), "", INVALID, ""),
    (tp(parent="0" * 16), "", INVALID, ""),
    (tp(parent=PID + "0"), "", INVALID, ""),
    ("00-" + TID + "_" + PID + "-01", "", INVALID, ""),
    (tp(flags="0G"), "", INVALID, ""),
    (tp(flags="AB"), "", INVALID, ""),
    (tp(flags="1"), "", INVALID, ""),
    (tp(version="cc", flags="1"), "", INVALID, ""),
    (tp(version="cc", rest=".what-the-future-will-be-like"), "", INVALID, ""),
    # tracestate: kept canonical, or dropped whole (the traceparent stays)
    (tp(), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", VALID, ""),
    (tp(), " rojo=1 ,\tcongo=2\t", VALID, ""),
    (tp(), ",,rojo=1,,congo=2,", VALID, ""),
    (tp(), "rojo=  leading spaces kept", VALID, ""),
    (tp(), "tenant7@vendor=x,a_-*/0=y", VALID, ""),
    (tp(), members(32), VALID, ""),
    (tp(), members(33), VALID, ""),
    (tp(), "rojo=1,congo=2,rojo=3", VALID, ""),
    (tp(), "Rojo=1", VALID, ""),
    (tp(), "1rojo=1", VALID, ""),
    (tp(), "rojo=a=b", VALID, ""),
    (tp(), "rojo=", VALID, ""),
    (tp(), "rojo=1,congo", VALID, ""),
    (tp(), "k" * 256 + "=1", VALID, ""),
    (tp(), "k" * 257 + "=1", VALID, ""),
    (tp(), "k=" + "v" * 257, VALID, ""),
    (tp(), "7" * 241 + "@" + "s" * 14 + "=1", VALID, ""),
    (tp(), "t@" + "s" * 15 + "=1", VALID, ""),
    (tp("ff"), "rojo=1", INVALID, ""),
    # where the Go SDK and the spec disagree
    (tp(rest="-extra"), "", INVALID,
     "version 00 is exactly 55 characters; the SDK's regexp takes any '-…' tail for every version"),
    (tp(flags="03"), "", VALID,
     "unknown flags are ignored (sent as zero); the SDK refuses flags above 02 with version 00"),
    (tp(flags="ff"), "", VALID, "the same for flags ff"),
    (" " + tp() + "\t", "", VALID,
     "HTTP drops optional whitespace around a field value; the SDK leaves that to net/http's reader"),
    (tp(), ",".join(f"m{i}=" + "v" * 100 for i in range(6)), VALID,
     "fieldlog keeps 512 characters of tracestate and truncates by whole members (the spec's rule); "
     "the SDK keeps any length"),
    (tp(), "rojo=1, ,\t,congo=2", VALID,
     "whitespace-only members are allowed (and skipped); the SDK skips only empty ones and drops the list"),
    (tp(), "rojo=1\n", VALID,
     "optional whitespace is spaces and tabs; the SDK's \\s also takes a newline"),
]


def run_peer(command, pairs, env=None):
    text = "".join(f"{a.encode().hex()}\t{b.encode().hex()}\n" for a, b in pairs)
    result = subprocess.run(command, input=text, capture_output=True, text=True, env=env, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {result.returncode}: {result.stderr.strip()}")
    lines = result.stdout.splitlines()
    if len(lines) != len(pairs):
        raise RuntimeError(f"{command[0]} answered {len(lines)} lines for {len(pairs)}")
    return lines


def extracted(line):
    """The extract part of a peer's answer: verdict, ids, flags, tracestate."""
    return line.split("\t")[:5]


def injected(line):
    """The headers a peer injected, as a (traceparent, tracestate) pair."""
    fields = line.split("\t")
    return fields[5], fields[6]


def build_go_peer(go, gopath, work, peer="otel_peer"):
    """Builds the Go program in the directory `peer` beside this file into `work`."""
    binary = os.path.join(work, peer)
    env = dict(os.environ, GO111MODULE="off", GOPATH=gopath, GOPROXY="off", GOFLAGS="", GOENV="off",
               GOCACHE=os.path.join(work, "gocache"))
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), peer)
    result = subprocess.run([go, "build", "-o", binary, "."], cwd=source, env=env, capture_output=True, text=True,
                            timeout=600)
    if result.returncode != 0:
        raise RuntimeError("go build failed (is golang-opentelemetry-otel-dev installed?):\n" + result.stderr)
    return binary


def main():
    fieldlog_peer, gopath, work = (os.path.abspath(a) for a in sys.argv[1:4])
    go = shutil.which("go")
    if go is None:
        print("SKIP: go is not installed (apt-get install golang-go golang-opentelemetry-otel-dev)")
        return 77
    os.makedirs(work, exist_ok=True)
    go_peer = build_go_peer(go, gopath, work)

    pairs = [(c[0], c[1]) for c in CASES]
    ours = run_peer([fieldlog_peer], pairs)
    theirs = run_peer([go_peer], pairs)
    failures = []
    differences = 0
    for (traceparent, tracestate, valid, disagreement), mine, go_line in zip(CASES, ours, theirs):
        row = f"traceparent {traceparent!r} tracestate {tracestate[:60]!r}"
        if (mine != "invalid") != valid:
            failures.append(f"{row}: fieldlog says {mine.split(chr(9))[0]}, the spec {'valid' if valid else 'invalid'}")
        if disagreement:
            differences += 1
            if mine == go_line:
                failures.append(f"{row}: expected the SDK to differ ({disagreement}), both print {mine!r}")
        elif mine != go_line:
            failures.append(f"{row}:\n  fieldlog {mine!r}\n  otel-go  {go_line!r}")

    # Both directions: each peer's injected headers, read by the other.
    agreed = [i for i, c in enumerate(CASES) if not c[3] and ours[i] != "invalid"]
    go_reads_ours = run_peer([go_peer], [injected(ours[i]) for i in agreed])
    we_read_go = run_peer([fieldlog_peer], [injected(theirs[i]) for i in agreed])
    for k, i in enumerate(agreed):
        if extracted(go_reads_ours[k]) != extracted(ours[i]):
            failures.append(f"otel-go reads fieldlog's {injected(ours[i])} as {go_reads_ours[k]!r}")
        if extracted(we_read_go[k]) != extracted(theirs[i]):
            failures.append(f"fieldlog reads otel-go's {injected(theirs[i])} as {we_read_go[k]!r}")

    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(CASES)} rows ({sum(1 for c in CASES if c[2])} valid traceparents, {differences} where the SDK "
          f"differs from the spec), {len(agreed)} re-injected both ways: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
