#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fieldlog's otel format against the OpenTelemetry Go SDK (Debian's golang-opentelemetry-otel-dev).

The SDK packaged (1.1.0) has no logs SDK and no log exporter, so the records are read back by
what it does have: otel_span_peer/main.go extracts each row's traceparent with the SDK's W3C
propagator, makes a resource of the record's `resource` and a tracer named by its
`instrumentation_scope`, and exports one span (child of the extracted context, started at the
record's `timestamp`, with the record's call facts read under the SDK's semconv v1.7.0 keys)
through the SDK's stdout trace exporter. Checked, per row, on the exporter's JSON:
 - trace_id, span_id, trace_flags: the record's top-level members are the context the SDK
   extracted from the same traceparent, and the record has none where the SDK found none;
 - resource: the SDK's typed attributes (STRING, INT64, FLOAT64, BOOL) are the configured ones;
 - the tracer's name is the logger's; the span's start time, from the record's nanosecond
   string, is the record's instant (also the largest a signed 64-bit count of nanoseconds holds);
 - code.file.path, code.line.number, code.function.name and thread.id are found under the
   conventions' keys (the packaged SDK's semconv predates the code ones' names), the numbers as integers.
The severity numbers have nothing in this SDK to be checked against (tests/otel_test.cpp checks
them against the data model's table).

usage: otel_records_crosscheck.py FIELDLOG_OTEL_RECORD_PEER GOPATH WORK_DIR   exit 0 pass, 1 fail, 77 skipped
"""
import datetime
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from otel_crosscheck import build_go_peer  # noqa: E402

TID = "4bf92f3577b34da6a3ce929d0e0e4736"
PID = "00f067aa0ba902b7"

# (traceparent, logger, seconds, nanoseconds)
ROWS = [
    (f"00-{TID}-{PID}-01", "http", 1796027891, 123456789),
    (f"00-{TID}-{PID}-00", "db.pool", 1700000000, 0),
    (f"cc-{TID}-{PID}-01-what-the-future-will-be-like", "a \"quoted\" name \u00fc", 0, 1),
    ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "http.client", 9223372036, 854775807),
    ("", "no.trace", 1796027891, 100000000),
    (f"00-{'0' * 32}-{PID}-01", "zero.trace", 1796027891, 5),
    (f"00-{TID.upper()}-{PID}-01", "upper.trace", 1796027891, 6),
]

# (argument for fieldlog's peer, key, the SDK's type, value)
RESOURCE = [
    ("s:service.name=checkout", "service.name", "STRING", "checkout"),
    ("s:service.version=1.4.2", "service.version", "STRING", "1.4.2"),
    ("s:deployment.environment=prod \u00fc \"q\"", "deployment.environment", "STRING", "prod \u00fc \"q\""),
    ("i:service.instance.id=7", "service.instance.id", "INT64", 7),
    ("i:process.pid=-42", "process.pid", "INT64", -42),
    ("d:sampling.ratio=0.25", "sampling.ratio", "FLOAT64", 0.25),
    ("d:weight=1", "weight", "FLOAT64", 1.0),
    ("b:canary=true", "canary", "BOOL", True),
]

FACTS = {"code.file.path": "STRING", "code.line.number": "INT64", "code.function.name": "STRING", "thread.id": "INT64"}


def rfc3339nano(seconds, nanos):
    """Go's time.RFC3339Nano of an instant in UTC: trailing zeros of the fraction dropped."""
    day = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    fraction = f"{nanos:09d}".rstrip("0")
    return day.strftime("%Y-%m-%dT%H:%M:%S") + ("." + fraction if fraction else "") + "Z"


def main():
    fieldlog_peer, gopath, work = (os.path.abspath(a) for a in sys.argv[1:4])
    go = shutil.which("go")
    if go is None:
        print("SKIP: go is not installed (apt-get install golang-go golang-opentelemetry-otel-dev)")
        return 77
    os.makedirs(work, exist_ok=True)
    go_peer = build_go_peer(go, gopath, work, "otel_span_peer")

    rows = "".join(f"{tp}\t{logger}\t{s}\t{ns}\n" for tp, logger, s, ns in ROWS)
    ours = subprocess.run([fieldlog_peer] + [r[0] for r in RESOURCE], input=rows, capture_output=True, text=True,
                          timeout=60, check=True).stdout.splitlines()
    if len(ours) != len(ROWS):
        raise RuntimeError(f"fieldlog's peer wrote {len(ours)} records for {len(ROWS)} rows")
    feed = "".join(f"{row[0]}\t{line}\n" for row, line in zip(ROWS, ours))
    result = subprocess.run([go_peer], input=feed, capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, TZ="UTC"))
    if result.returncode != 0:
        raise RuntimeError(f"the Go peer exited {result.returncode}: {result.stderr.strip()}")
    spans = [json.loads(line) for line in result.stdout.splitlines()]
    if len(spans) != len(ROWS):
        raise RuntimeError(f"the Go peer exported {len(spans)} spans for {len(ROWS)} rows")

    failures = []
    expected_resource = {key: (kind, value) for _, key, kind, value in RESOURCE}
    for (traceparent, logger, seconds, nanos), line, span in zip(ROWS, ours, spans):
        record = json.loads(line)
        row = f"row {traceparent!r} {logger!r}"
        parent = span["Parent"]
        if parent["TraceID"] == "0" * 32:
            lifted = [k for k in ("trace_id", "span_id", "trace_flags") if k in record]
            if lifted:
                failures.append(f"{row}: the SDK extracts no context, the record has {lifted}")
        else:
            for ours_key, sdk_key in (("trace_id", "TraceID"), ("span_id", "SpanID"), ("trace_flags", "TraceFlags")):
                if record.get(ours_key) != parent[sdk_key]:
                    failures.append(f"{row}: {ours_key} {record.get(ours_key)!r}, the SDK's {sdk_key} {parent[sdk_key]!r}")
        resource = {kv["Key"]: (kv["Value"]["Type"], kv["Value"]["Value"]) for kv in span["Resource"]}
        if resource != expected_resource:
            failures.append(f"{row}: the SDK reads the resource as {resource}, expected {expected_resource}")
        if span["InstrumentationLibrary"]["Name"] != logger:
            failures.append(f"{row}: the tracer is {span['InstrumentationLibrary']['Name']!r}, the logger {logger!r}")
        if record["timestamp"] != str(seconds * 10**9 + nanos) or record["observed_timestamp"] != record["timestamp"]:
            failures.append(f"{row}: timestamp {record['timestamp']!r}, observed {record['observed_timestamp']!r}")
        if span["StartTime"] != rfc3339nano(seconds, nanos):
            failures.append(f"{row}: the SDK's start time {span['StartTime']!r}, expected {rfc3339nano(seconds, nanos)!r}")
        facts = {kv["Key"]: (kv["Value"]["Type"], kv["Value"]["Value"]) for kv in span.get("Attributes") or []}
        if {k: t for k, (t, _) in facts.items()} != FACTS:
            failures.append(f"{row}: the SDK finds the call facts {facts}, expected the keys and types {FACTS}")
        elif any(record["attributes"][k] != v for k, (_, v) in facts.items()):
            failures.append(f"{row}: the SDK's call facts {facts} differ from the record's {record['attributes']}")

    for failure in failures:
        print("FAIL:", failure)
    with_context = sum(1 for s in spans if s["Parent"]["TraceID"] != "0" * 32)
    print(f"{len(ROWS)} records ({with_context} with a trace context the SDK extracted), {len(RESOURCE)} resource "
          f"attributes, {len(FACTS)} call facts: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
