#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The file sink under Debian's real logrotate.

A helper process logs numbered records from 4 threads into app.log; logrotate (`create` plus a
`postrotate` that sends SIGHUP, which the helper turns into fieldlog::reopen_files()) rotates
the file 10 times while they log. Afterwards every record must be in exactly one file, once,
each thread's records in order from the oldest file to the newest, and every file must hold
whole lines only.

usage: logrotate_test.py SINK_HELPER          exit 0 pass, 1 fail, 77 skipped
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROTATIONS = 10
THREADS = 4


def fail(message):
    print(f"FAIL: {message}")
    return 1


def main():
    helper = sys.argv[1]
    logrotate = shutil.which("logrotate") or "/usr/sbin/logrotate"
    if not os.access(logrotate, os.X_OK):
        print("SKIP: logrotate is not installed (apt-get install logrotate)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-logrotate-") as directory:
        log = os.path.join(directory, "app.log")
        service = subprocess.Popen([helper, "file-logger", log, str(THREADS)], stdout=subprocess.PIPE, text=True)
        try:
            if service.stdout.readline().strip() != "ready":
                return fail("the helper did not start")
            config = os.path.join(directory, "logrotate.conf")
            with open(config, "w") as out:
                out.write(f"""{log} {{
    rotate {ROTATIONS + 5}
    create 0644
    missingok
    postrotate
        kill -HUP {service.pid}
    endscript
}}
""")
            os.chmod(config, 0o644)
            state = os.path.join(directory, "logrotate.state")
            for rotation in range(ROTATIONS):
                time.sleep(0.15)
                done = subprocess.run([logrotate, "-f", "-s", state, config], capture_output=True, text=True)
                if done.returncode != 0:
                    return fail(f"logrotate run {rotation + 1} failed: {done.stderr.strip()}")
            time.sleep(0.15)
        finally:
            service.send_signal(signal.SIGTERM)
            output, _ = service.communicate(timeout=60)
        if service.returncode != 0:
            return fail(f"the helper exited with {service.returncode}")

        sent = {int(t): int(n) for t, n in re.findall(r"thread (\d+): (\d+)", output)}
        if len(sent) != THREADS:
            return fail(f"the helper reported {output!r}")
        files = [f"{log}.{n}" for n in range(ROTATIONS + 5, 0, -1) if os.path.exists(f"{log}.{n}")] + [log]
        if len(files) != ROTATIONS + 1:
            return fail(f"expected {ROTATIONS + 1} files, found {[os.path.basename(f) for f in files]}")

        last_seq = {t: -1 for t in sent}
        seen = 0
        for path in files:  # oldest first
            with open(path, "rb") as data:
                text = data.read()
            if text and not text.endswith(b"\n"):
                return fail(f"{os.path.basename(path)} ends inside a record")
            for number, line in enumerate(text.splitlines(), 1):
                try:
                    record = json.loads(line)
                except ValueError as error:
                    return fail(f"{os.path.basename(path)}:{number}: not a JSON line ({error}): {line[:80]!r}")
                thread, seq = record["thread"], record["seq"]
                if seq <= last_seq[thread]:
                    return fail(f"{os.path.basename(path)}:{number}: thread {thread} seq {seq} after {last_seq[thread]} (duplicate or out of order)")
                if seq != last_seq[thread] + 1:
                    return fail(f"{os.path.basename(path)}:{number}: thread {thread} records {last_seq[thread] + 1}..{seq - 1} lost")
                last_seq[thread] = seq
                seen += 1
        for thread, count in sent.items():
            if last_seq[thread] + 1 != count:
                return fail(f"thread {thread} logged {count} records, the files hold {last_seq[thread] + 1}")
        sizes = [os.path.getsize(f) for f in files]
        print(f"PASS: {seen} records from {THREADS} threads over {ROTATIONS} rotations, 0 lost, 0 duplicated; "
              f"file sizes {sizes}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
