#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One burst of COUNT records from one thread to a real systemd-journald, through fieldlog's
journald sink (sync and async waiting for room, sync with when_full = drop) and through
libsystemd's sd_journal_send, in one run
(docs/performance.md, "journald"). By hand, not in CTest; needs root.

For each sender it starts a fresh journald as a plain process (tests/sinks/journald_start.sh,
as tests/journald_sink_test.cpp does), runs fieldlog_journald_burst inside journald's mount
namespace (nsenter), where /run/systemd/journal/socket is that journald's, waits until journald
has written everything, counts the sender's entries with `journalctl -o json`, and stops it.
Prints a Markdown table: records taken by the journal, dropped, the caller's wait per record
(p50, p99, max) and the records per second of the whole burst.

usage: journald_burst.py BURST_PROGRAM [COUNT]      exit 0 done, 1 failed, 77 skipped
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

JOURNALD = "/lib/systemd/systemd-journald"
JOURNALCTL = "/usr/bin/journalctl"
UNSHARE = "/usr/bin/unshare"
NSENTER = "/usr/bin/nsenter"
JOURNALD_START = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "sinks", "journald_start.sh")
JOURNAL_MAX_USE = "4G"  # every entry of a burst stays
SENDERS = (("sd_journal_send", "sd_journal_send"), ("sync", "fieldlog-sync"), ("async", "fieldlog-async"),
           ("drop", "fieldlog-drop"))


def wait_until(done, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.05)
    return done()


def journal_json(logs, *matches):
    run = subprocess.run([JOURNALCTL, f"--directory={logs}", "-o", "json", "--output-fields=SEQ", "--no-pager", *matches],
                         capture_output=True, text=True, timeout=600)
    return run.stdout


def burst(program, mode, identifier, count, root):
    """(the program's figures, entries the journal holds) for one sender, with a journald of its own."""
    runtime, logs = os.path.join(root, "runtime"), os.path.join(root, "logs")
    os.makedirs(runtime)
    os.makedirs(logs)
    path = os.path.join(runtime, "socket")
    with open(os.path.join(root, "journald.out"), "w") as out:
        journald = subprocess.Popen([UNSHARE, "--mount", "--propagation", "private", "/bin/sh", JOURNALD_START, root,
                                     JOURNAL_MAX_USE], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        def probe(tag):
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
                try:
                    s.sendto(f"MESSAGE=probe\nBENCH_PROBE={tag}\n".encode(), path)
                except OSError:
                    return False
            return wait_until(lambda: journal_json(logs, f"BENCH_PROBE={tag}").strip() != "", 10)
        if not wait_until(lambda: os.path.exists(path) and probe("start"), 20):
            raise SystemExit("systemd-journald did not start")
        run = subprocess.run([NSENTER, f"--target={journald.pid}", "--mount", program, mode, str(count)],
                             capture_output=True, text=True, timeout=900)
        if run.returncode != 0:
            raise SystemExit(f"{program} {mode} failed ({run.returncode}): {run.stderr}")
        if not probe("end"):  # journald writes the datagrams in the order they came
            raise SystemExit("journald did not take the final probe")
        entries = journal_json(logs, f"SYSLOG_IDENTIFIER={identifier}").count("\n")
    finally:
        journald.terminate()
        journald.wait(timeout=60)
    words = run.stdout.split()
    return dict(zip(words[1::2], (float(w) for w in words[2::2]))), entries


def micros(nanoseconds):
    return f"{nanoseconds / 1000:,.1f} µs"


def main():
    program = os.path.abspath(sys.argv[1])  # nsenter starts it from journald's namespace
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 500000
    for tool in (JOURNALD, JOURNALCTL, UNSHARE, NSENTER):
        if not os.access(tool, os.X_OK):
            print(f"SKIP: {tool} is not installed")
            return 77
    if os.geteuid() != 0:
        print("SKIP: journald's private mount namespace needs root")
        return 77
    rows = []
    with tempfile.TemporaryDirectory(prefix="fieldlog-journald-burst-") as directory:
        for mode, identifier in SENDERS:
            figures, taken = burst(program, mode, identifier, count, os.path.join(directory, mode))
            rows.append((identifier, figures, taken))
    print(f"{count:,} records, one thread, to systemd-journald")
    print("| sender | taken by the journal | dropped (counted) | caller's wait p50 | p99 | max | records/s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for identifier, figures, taken in rows:
        print(f"| {identifier} | {taken:,} | {int(figures['dropped']):,} | {micros(figures['p50_ns'])} "
              f"| {micros(figures['p99_ns'])} | {micros(figures['max_ns'])} | {figures['records'] / figures['seconds']:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
