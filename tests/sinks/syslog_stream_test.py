#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The syslog sink over TCP and TLS against Debian's real rsyslogd, restarted under load.

Starts rsyslogd in the foreground with imtcp on a loopback port (TLS: rsyslog-gnutls with a CA
and a server certificate this script makes with openssl), writing `%msg%` of every message to
one file through a Direct ruleset queue (no queue of rsyslog's own between the socket and the
file). A helper process logs numbered records through the syslog sink without pause; meanwhile
the receiver is stopped and started again RESTARTS times, each time after new records reached
the file (a wait for that condition, no fixed sleeps). The helper writes the numbers of the
records its sink dropped (a full buffer); at the end it waits until the receiver acknowledged
its whole buffer and prints its counters.

Checked: every line is one whole JSON record (no frame cut or merged; after SIGKILL, the
daemon's own cut of its file at the kill is told apart, see Delivery); the sink's drop count
equals the records it named as dropped, and none of those arrived; every other record arrived,
except around a stop, where TCP cannot tell the sender what the daemon did: records lost
(acknowledged by the receiver's kernel, never read by the daemon) and records twice (read by
the daemon, but its reset overtook the acknowledgement, so they were sent again). Each must
form at most one run per stop; both are counted and printed. (Records per second through this
sink and the others: sink_throughput.py.)

usage: syslog_stream_test.py SINK_HELPER [tcp|tls] [term|kill]    exit 0 pass, 1 fail, 77 skipped
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

RESTARTS = 10
BUFFER_BYTES = 256 * 1024
GTLS = "/usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so"


def fail(message):
    print(f"FAIL: {message}")
    return 1


def free_tcp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port):
    """Whether something accepts TCP connections on the loopback port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def count_lines(path):
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as data:
        return data.read().count(b"\n")


def wait_until(condition, timeout, step=0.01):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def runs(numbers, sent, skip):
    """How many maximal runs of consecutive record numbers `numbers` forms, looking through
    the numbers in `skip` (records dropped while the receiver was down lie between them)."""
    count = 0
    inside = False
    for seq in range(sent):
        if seq in numbers:
            count += 0 if inside else 1
            inside = True
        elif seq not in skip:
            inside = False
    return count


def record_number(line):
    try:
        return json.loads(line)["seq"]
    except (ValueError, KeyError):
        return None


class Delivery:
    """What arrived of the `sent` numbered records of a restart run: the receiver's file of JSON
    bodies (one "seq" each) against the sender's list of the records it dropped (counted).

    A daemon killed by SIGKILL may leave the start of a record in its file: rsyslog's file
    writer flushes its buffer when it fills, mid-record, and the daemon started next appends
    after that cut. With `receiver_killed`, a line that is such a cut followed by one whole
    record counts as that record and a cut by the kill (at most one per stop); the cut record
    itself counts as lost."""

    def __init__(self, bodies, sent, dropped_path, receiver_killed=False):
        self.sent = sent
        self.seen, self.twice, self.copies, self.malformed, self.cut_by_kill = set(), set(), 0, 0, 0
        with open(bodies, "rb") as data:
            for line in data.read().splitlines():
                seq = record_number(line)
                restart = line.rfind(b'{"ts":')
                if seq is None and receiver_killed and restart > 0:
                    seq = record_number(line[restart:])
                    self.cut_by_kill += seq is not None
                if seq is None:
                    self.malformed += 1
                    continue
                if seq in self.seen:
                    self.copies += 1
                    self.twice.add(seq)
                self.seen.add(seq)
        with open(dropped_path) as data:
            self.dropped = {int(line) for line in data}
        self.lost = {seq for seq in range(sent) if seq not in self.seen and seq not in self.dropped}
        self.lost_runs = runs(self.lost, sent, self.dropped)
        self.twice_runs = runs(self.twice, sent, self.dropped)

    def figures(self, counters):
        return (f"sent {self.sent}, delivered {len(self.seen)}, dropped (buffer full, counted) {counters['dropped']}, "
                f"lost {len(self.lost)} (in {self.lost_runs} runs), twice {self.copies} (in {self.twice_runs} runs), "
                f"cut or merged lines {self.malformed}, cut by the receiver's kill {self.cut_by_kill}, connects {counters['connects']}, resent {counters['resent']}")

    def problem(self, counters):
        """What every restart run must show, whatever the transport: None, or what went wrong."""
        if self.malformed:
            return f"{self.malformed} lines are not one whole record"
        if self.cut_by_kill > RESTARTS:
            return f"{self.cut_by_kill} records cut, more than the {RESTARTS} kills of the receiver"
        if self.seen and max(self.seen) >= self.sent:
            return "more records arrived than were sent"
        if len(self.dropped) != counters["dropped"]:
            return f"the sink counted {counters['dropped']} drops, the sender saw {len(self.dropped)}"
        if self.seen & self.dropped:
            return f"{len(self.seen & self.dropped)} records counted as dropped arrived"
        if counters["connects"] < RESTARTS + 1:
            return f"{counters['connects']} connections for {RESTARTS} restarts"
        if self.copies != len(self.twice):
            return f"a record arrived three times or more ({self.copies} copies of {len(self.twice)})"
        return None


def make_certificates(directory):
    """A CA and a server certificate for localhost / 127.0.0.1 signed by it."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=fieldlog test CA",
            "-keyout", "ca-key.pem", "-out", "ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server-key.pem",
            "-out", "server.csr")
    with open(os.path.join(directory, "server.ext"), "w") as ext:
        ext.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
            "-days", "2", "-extfile", "server.ext", "-out", "server.pem")
    return [os.path.join(directory, name) for name in ("ca.pem", "server.pem", "server-key.pem")]


def rsyslog_config(directory, port, bodies, tls, certificates):
    if tls:
        ca, cert, key = certificates
        net = (f'global(DefaultNetstreamDriverCAFile="{ca}" DefaultNetstreamDriverCertFile="{cert}"\n'
               f'       DefaultNetstreamDriverKeyFile="{key}")\n'
               'module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")\n')
    else:
        net = 'module(load="imtcp")\n'
    return f"""global(workDirectory="{directory}" maxMessageSize="64k")
{net}template(name="body" type="string" string="%msg%\\n")
ruleset(name="fieldlog" queue.type="Direct") {{
    action(type="omfile" file="{bodies}" template="body")
}}
input(type="imtcp" address="127.0.0.1" port="{port}" ruleset="fieldlog")
"""


def main():
    helper = sys.argv[1]
    transport = sys.argv[2] if len(sys.argv) > 2 else "tcp"
    stop_signal = signal.SIGKILL if len(sys.argv) > 3 and sys.argv[3] == "kill" else signal.SIGTERM
    rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    if not os.access(rsyslogd, os.X_OK):
        print("SKIP: rsyslogd is not installed (apt-get install rsyslog)")
        return 77
    if transport == "tls" and not (os.path.exists(GTLS) and shutil.which("openssl")):
        print("SKIP: rsyslog's TLS driver or openssl is not installed (apt-get install rsyslog-gnutls openssl)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-syslog-") as directory:
        port = free_tcp_port()
        bodies = os.path.join(directory, "bodies.log")
        config = os.path.join(directory, "rsyslog.conf")
        certificates = make_certificates(directory) if transport == "tls" else []
        with open(config, "w") as out:
            out.write(rsyslog_config(directory, port, bodies, transport == "tls", certificates))
        pidfile = os.path.join(directory, "rsyslogd.pid")

        def start_receiver():
            return subprocess.Popen([rsyslogd, "-n", "-f", config, "-i", pidfile],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        daemon = start_receiver()
        ca = certificates[0] if certificates else "-"
        dropped_path = os.path.join(directory, "dropped.txt")
        sender = subprocess.Popen([helper, "syslog-stream", f"127.0.0.1:{port}", transport, ca, str(BUFFER_BYTES),
                                   dropped_path],
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
                return fail(f"the receiver never acknowledged the whole buffer: {counters}")
            # Everything acknowledged is in rsyslog's hands: wait until the file stops growing.
            last = -1
            while count_lines(bodies) != last:
                last = count_lines(bodies)
                time.sleep(0.2)
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
            daemon.terminate()
            daemon.wait(timeout=30)
        elapsed = time.monotonic() - started

        delivery = Delivery(bodies, counters["records"], dropped_path, stop_signal == signal.SIGKILL)
        stop_name = "SIGKILL" if stop_signal == signal.SIGKILL else "SIGTERM"
        figures = f"{transport}, {RESTARTS} restarts by {stop_name} in {elapsed:.1f} s: " + delivery.figures(counters)
        print(figures)
        if problem := delivery.problem(counters):
            return fail(problem)
        if delivery.lost_runs > RESTARTS:
            return fail(f"records lost in {delivery.lost_runs} places, more than the {RESTARTS} stops")
        if delivery.twice_runs > RESTARTS:
            return fail(f"records twice in {delivery.twice_runs} places, more than once per stop")
        print("PASS: " + figures)
        return 0


if __name__ == "__main__":
    sys.exit(main())
