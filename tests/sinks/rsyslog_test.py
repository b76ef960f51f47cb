#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The UDP sink's RFC 5424 framing against Debian's real rsyslogd.

Starts rsyslogd in the foreground (`rsyslogd -n -f CONF -i PIDFILE`) with imudp on a loopback
port, writing `%msg%` of every message to one file and the parsed header fields to another.
A helper process sends records framed as RFC 5424 and writes the same JSON lines to a file;
rsyslog's `%msg%` must equal each JSON line byte for byte, and the header it parsed must be
ours (facility, severity by level, APP-NAME, PROCID, a 6-digit UTC timestamp).

usage: rsyslog_test.py SINK_HELPER            exit 0 pass, 1 fail, 77 skipped
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

RECORDS = 2000
SEVERITY_BY_SEQ = ["7", "6", "4", "3"]  # the helper cycles debug, info, warn, error


def fail(message):
    print(f"FAIL: {message}")
    return 1


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_lines(path, count, timeout):
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path, "rb") as data:
                lines = data.read().splitlines()
            if len(lines) >= count:
                return lines
        time.sleep(0.05)
    return lines


def main():
    helper = sys.argv[1]
    rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    if not os.access(rsyslogd, os.X_OK):
        print("SKIP: rsyslogd is not installed (apt-get install rsyslog)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-rsyslog-") as directory:
        port = free_udp_port()
        bodies = os.path.join(directory, "bodies.log")
        headers = os.path.join(directory, "headers.log")
        config = os.path.join(directory, "rsyslog.conf")
        with open(config, "w") as out:
            out.write(f"""global(workDirectory="{directory}" maxMessageSize="64k")
module(load="imudp")
template(name="body" type="string" string="%msg%\\n")
template(name="header" type="string"
         string="%syslogfacility%,%syslogseverity%,%app-name%,%procid%,%timestamp:::date-rfc3339%\\n")
ruleset(name="fieldlog") {{
    action(type="omfile" file="{bodies}" template="body")
    action(type="omfile" file="{headers}" template="header")
}}
input(type="imudp" address="127.0.0.1" port="{port}" ruleset="fieldlog")
""")
        pidfile = os.path.join(directory, "rsyslogd.pid")
        daemon = subprocess.Popen([rsyslogd, "-n", "-f", config, "-i", pidfile],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            # rsyslogd is ready once a probe comes out the other end.
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                ready = False
                for _ in range(100):
                    probe.sendto(b"<134>1 2026-01-01T00:00:00Z h probe - - - probe", ("127.0.0.1", port))
                    if wait_for_lines(bodies, 1, 0.1):
                        ready = True
                        break
                    if daemon.poll() is not None:
                        return fail(f"rsyslogd exited: {daemon.stdout.read()}")
            if not ready:
                return fail("rsyslogd never received the probe")
            time.sleep(0.3)  # let stray probes drain before counting
            probes = len(wait_for_lines(bodies, 1, 1))

            expected_path = os.path.join(directory, "expected.jsonl")
            sender = subprocess.run([helper, "syslog-sender", f"127.0.0.1:{port}", str(RECORDS), expected_path],
                                    capture_output=True, text=True, timeout=120)
            if sender.returncode != 0:
                return fail(f"the sender failed: {sender.stderr}")
            with open(expected_path, "rb") as data:
                expected = data.read().splitlines()
            if len(expected) != RECORDS:
                return fail(f"the sender wrote {len(expected)} expected lines, not {RECORDS}")
            received = wait_for_lines(bodies, probes + RECORDS, 30)[probes:]
            header_lines = wait_for_lines(headers, probes + RECORDS, 5)[probes:]
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)

        if len(received) != RECORDS:
            return fail(f"rsyslog wrote {len(received)} of {RECORDS} messages")
        for number, (got, want) in enumerate(zip(received, expected), 1):
            if got != want:
                return fail(f"message {number}: rsyslog's %msg% differs from our JSON line\n  got  {got!r}\n  want {want!r}")
        for number, line in enumerate(header_lines, 0):
            facility, severity, app, procid, timestamp = line.decode().split(",")
            if facility != "16" or app != "fieldlog-test" or not procid.isdigit():
                return fail(f"header {number + 1} parsed as {line!r}")
            if severity != SEVERITY_BY_SEQ[number % 4]:
                return fail(f"header {number + 1}: severity {severity}, expected {SEVERITY_BY_SEQ[number % 4]}")
            if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|\+00:00)", timestamp):
                return fail(f"header {number + 1}: timestamp {timestamp!r} is not UTC with 6 digits")
            ts = json.loads(expected[number])["ts"]  # 9 digits; the header floors to 6
            if timestamp[:26] != ts[:26]:
                return fail(f"header {number + 1}: timestamp {timestamp!r} is not {ts!r} floored to microseconds")
        print(f"PASS: rsyslogd received {RECORDS} RFC 5424 messages; every %msg% equals our JSON line byte for byte")
        return 0


if __name__ == "__main__":
    sys.exit(main())
