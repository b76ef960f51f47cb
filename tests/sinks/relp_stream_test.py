#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The syslog sink over RELP against Debian's real rsyslogd (imrelp), restarted under load.
With `tls`, RELP inside TLS (transport relp-tls): imrelp with tls="on" and
tls.authMode="certvalid", the certificates of syslog_tls_cases.py (the sink gives the client one).

Starts rsyslogd in the foreground with imrelp on a loopback port, writing `%msg%` of every
message to one file through a Direct ruleset queue: imrelp hands each message to omfile on its
own thread and sends the `rsp` after omfile wrote it, so an `rsp 200` means "in the file". A
helper process logs numbered records through the syslog sink (transport relp) without pause;
meanwhile the receiver is stopped (SIGTERM or SIGKILL) and started again RESTARTS times, each
time after new records reached the file (a wait for that condition, no fixed sleeps). The
helper writes the numbers of the records its sink dropped (a full buffer); at the end it waits
until the receiver answered its whole buffer and prints its counters.

Checked: every line is one whole JSON record; the sink's drop count equals the records it
named as dropped, and none of those arrived; no other record is lost. A record arrives twice
only when the daemon wrote it and stopped before its `rsp` reached the sink, so copies form at
most one run per stop, each no longer than the RELP window (128 records). That holds for
SIGTERM too: librelp sends its `serverclose` hint straight to the socket, past the rsps still
waiting in the session's send queue (the socket was full: a busy TLS session), and then
destroys that queue (relpSessSrvSendHint, relpSessDestruct), so the written frames behind
those rsps are resent by the sink, as RELP intends after a broken session.

usage: relp_stream_test.py SINK_HELPER [tls] [term|kill]    exit 0 pass, 1 fail, 77 skipped
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from syslog_stream_test import Delivery, count_lines, fail, free_tcp_port, wait_until
from syslog_tls_cases import make_certificates

RESTARTS = 10
BUFFER_BYTES = 256 * 1024
RELP_WINDOW = 128  # frames the sink sends without their rsp (sinks/syslog/syslog_sink.cpp)
IMRELP = "/usr/lib/x86_64-linux-gnu/rsyslog/imrelp.so"


def rsyslog_config(directory, port, bodies, certs=None):
    """imrelp on `port`, each message's %msg% to `bodies`; with `certs` (make_certificates), TLS
    requiring a client certificate signed by the test's CA."""
    tls = (f' tls="on" tls.authMode="certvalid" tls.cacert="{certs["ca"]}"\n'
           f'      tls.mycert="{certs["server"]}" tls.myprivkey="{certs["server-key"]}"') if certs else ""
    return f"""global(workDirectory="{directory}" maxMessageSize="64k")
module(load="imrelp")
template(name="body" type="string" string="%msg%\\n")
ruleset(name="fieldlog" queue.type="Direct") {{
    action(type="omfile" file="{bodies}" template="body")
}}
input(type="imrelp" address="127.0.0.1" port="{port}" ruleset="fieldlog"{tls})
"""


def main():
    helper = sys.argv[1]
    modes = sys.argv[2:]
    stop_signal = signal.SIGKILL if "kill" in modes else signal.SIGTERM
    tls = "tls" in modes
    rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    if not os.access(rsyslogd, os.X_OK):
        print("SKIP: rsyslogd is not installed (apt-get install rsyslog)")
        return 77
    if not os.path.exists(IMRELP):
        print("SKIP: rsyslog's RELP input is not installed (apt-get install rsyslog-relp)")
        return 77
    if tls and not shutil.which("openssl"):
        print("SKIP: openssl is not installed (apt-get install openssl)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-relp-") as directory:
        port = free_tcp_port()
        bodies = os.path.join(directory, "bodies.log")
        config = os.path.join(directory, "rsyslog.conf")
        certs = make_certificates(directory) if tls else None
        with open(config, "w") as out:
            out.write(rsyslog_config(directory, port, bodies, certs))
        pidfile = os.path.join(directory, "rsyslogd.pid")

        def start_receiver():
            return subprocess.Popen([rsyslogd, "-n", "-f", config, "-i", pidfile],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        daemon = start_receiver()
        dropped_path = os.path.join(directory, "dropped.txt")
        transport = ["relp-tls", certs["ca"]] if tls else ["relp", "-"]
        client = [certs["client"], certs["client-key"]] if tls else []
        sender = subprocess.Popen([helper, "syslog-stream", f"127.0.0.1:{port}", *transport, str(BUFFER_BYTES),
                                   dropped_path, *client],
                                  stdout=subprocess.PIPE, text=True)
        started = time.monotonic()
        try:
            if sender.stdout.readline().strip() != "ready":
                return fail("the sender did not start")
            for restart in range(RESTARTS):
                before = count_lines(bodies)
                if not wait_until(lambda: count_lines(bodies) > before + 1000, 20):
                    return fail(f"restart {restart}: no records reached rsyslog ({count_lines(bodies)} lines)")
                daemon.send_signal(stop_signal)
                daemon.wait(timeout=30)
                if os.path.exists(pidfile):
                    os.unlink(pidfile)
                daemon = start_receiver()
            before = count_lines(bodies)
            if not wait_until(lambda: count_lines(bodies) > before + 1000, 20):
                return fail("no records after the last restart")
            sender.send_signal(signal.SIGTERM)
            summary = sender.stdout.read().split()
            if sender.wait(timeout=60) != 0 or len(summary) != 12:
                return fail(f"the sender failed: {summary}")
            counters = dict(zip(summary[0::2], (int(n) for n in summary[1::2])))
            if counters["unacknowledged_bytes"] != 0:
                return fail(f"the receiver never answered the whole buffer: {counters}")
            # Every record answered is in the file already (the rsp follows omfile's write).
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
            daemon.terminate()
            daemon.wait(timeout=30)
        elapsed = time.monotonic() - started

        delivery = Delivery(bodies, counters["records"], dropped_path, stop_signal == signal.SIGKILL)
        stop_name = "SIGKILL" if stop_signal == signal.SIGKILL else "SIGTERM"
        figures = (f"{transport[0]}, {RESTARTS} restarts by {stop_name} in {elapsed:.1f} s: " + delivery.figures(counters) +
                   f", errors {counters['errors']}")
        print(figures)
        if problem := delivery.problem(counters):
            return fail(problem)
        if delivery.lost:
            return fail(f"{len(delivery.lost)} records answered or never sent are missing, first {min(delivery.lost)}")
        if delivery.twice_runs > RESTARTS or delivery.copies > RESTARTS * RELP_WINDOW:
            return fail(f"records twice in {delivery.twice_runs} places ({delivery.copies}), more than one window per stop")
        print("PASS: " + figures)
        return 0


if __name__ == "__main__":
    sys.exit(main())
