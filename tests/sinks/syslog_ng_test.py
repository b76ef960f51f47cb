#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The syslog sink against a real syslog-ng (Debian's syslog-ng-core), over TCP and TLS.

syslog-ng-core conflicts with rsyslog in apt, so .ci/syslog-ng unpacks the package into a
directory of its own (FIELDLOG_SYSLOG_NG_ROOT, default /opt/fieldlog-test-peers/syslog-ng), and
this script runs it as a plain process (`--foreground --no-caps`) with its own configuration,
persist file, pid file and control socket. Its sources are syslog() drivers on loopback ports
(RFC 6587 octet counting, the RFC 5424 header parsed), each writing to a file of its own with
flow control (syslog-ng stops reading rather than drop).

  fields    Records of every field kind over TCP, and over TLS to a source that requires a
            client certificate signed by the test's CA (peer-verify(required-trusted)).
            For each record, syslog-ng writes its parse of the header (APP-NAME, HOSTNAME,
            PROCID, MSGID, SD, facility, severity, timestamp) and $MSG with $(format-json);
            each must be what the sink sent, in order.
            Then the same TLS source with no client certificate, and with one from another CA;
            and a wrong server_name, and a ca_file the server's certificate does not chain to.
            Each must deliver nothing, the sink must say why on stderr and hold every record,
            not free it as delivered (so closing counts it dropped), and no log call may wait.
  restarts  Numbered records over TCP without pause while syslog-ng is stopped by SIGTERM and
            started again RESTARTS times: the accounting of syslog_stream_test.py (drops exact
            and named, nothing cut, losses and repeats each in at most one run per stop).

usage: syslog_ng_test.py SINK_HELPER fields|restarts      exit 0 pass, 1 fail, 77 skipped
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from syslog_stream_test import BUFFER_BYTES, RESTARTS, Delivery, count_lines, fail, free_tcp_port, wait_until
from syslog_tls_cases import RECORDS, SEVERITY, check_refusals, make_certificates, run_records

ROOT = os.environ.get("FIELDLOG_SYSLOG_NG_ROOT", "/opt/fieldlog-test-peers/syslog-ng")
# Every field of the header as syslog-ng parsed it, and the message, as one JSON object a line.
PARSED = ("$(format-json --pair app=$PROGRAM --pair host=$HOST --pair pid=$PID --pair msgid=$MSGID "
          "--pair sdata=$SDATA --pair facility=$FACILITY_NUM --pair severity=$LEVEL_NUM --pair ts=$S_ISODATE "
          "--pair msg=$MSG)\\n")


def module_directory():
    """syslog-ng's modules, in a directory named for its version; "" when there are none."""
    return (glob.glob(os.path.join(ROOT, "usr/lib/syslog-ng/[0-9]*")) or [""])[0]


class SyslogNg:
    """One syslog-ng configuration in `directory`, started and stopped as often as asked."""

    def __init__(self, directory, sources):
        self.directory = directory
        self.binary = os.path.join(ROOT, "usr/sbin/syslog-ng")
        self.modules = module_directory()
        self.pidfile = os.path.join(directory, "syslog-ng.pid")
        self.config = os.path.join(directory, "syslog-ng.conf")
        self.process = None
        with open(self.config, "w") as out:
            out.write("@version: 3.38\n"
                      'options { keep-hostname(yes); stats-freq(0); frac-digits(6); time-zone("+00:00");\n'
                      "          log-msg-size(65536); };\n")
            for name, (driver, output, template) in sources.items():
                out.write(f"source s_{name} {{ {driver}; }};\n"
                          f'destination d_{name} {{ file("{output}" template("{template}")); }};\n'
                          f"log {{ source(s_{name}); destination(d_{name}); flags(flow-control); }};\n")

    def start(self):
        if os.path.exists(self.pidfile):
            os.unlink(self.pidfile)
        environment = dict(os.environ, LD_LIBRARY_PATH=os.path.join(ROOT, "usr/lib/syslog-ng"))
        self.process = subprocess.Popen(
            [self.binary, f"--module-path={self.modules}", "--foreground", "--no-caps", "-f", self.config,
             "-R", os.path.join(self.directory, "syslog-ng.persist"), "-p", self.pidfile,
             "-c", os.path.join(self.directory, "syslog-ng.ctl")],
            env=environment, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.directory, "syslog-ng.err"), "a"))
        # The pid file is written once the sources listen.
        if not wait_until(lambda: os.path.exists(self.pidfile) or self.process.poll() is not None, 10):
            raise RuntimeError("syslog-ng did not start")
        if self.process.poll() is not None:
            with open(os.path.join(self.directory, "syslog-ng.err")) as errors:
                raise RuntimeError("syslog-ng failed: " + errors.read()[-2000:])

    def stop(self, stop_signal=signal.SIGTERM):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(stop_signal)
            self.process.wait(timeout=30)


def check_fields(parsed_path, expected_path, pid):
    """syslog-ng's parse of every record against the line the sink was given; "" or what differs."""
    with open(expected_path, "rb") as data:
        expected = [line.decode() for line in data.read().splitlines()]
    with open(parsed_path, "rb") as data:
        parsed = [json.loads(line) for line in data.read().splitlines()]
    if len(expected) != RECORDS or len(parsed) != RECORDS:
        return f"{len(parsed)} records arrived, {len(expected)} written, {RECORDS} logged"
    for number, (line, got) in enumerate(zip(expected, parsed)):
        record = json.loads(line)
        want = {"app": "fieldlog-test", "host": "fieldlog-host", "pid": str(pid), "msgid": "", "sdata": "",
                "facility": "16", "severity": SEVERITY[record["level"]],
                "ts": record["ts"][:26] + "+00:00",  # the header's six digits, floored, in UTC
                "msg": line}
        if got != want or record["seq"] != number:
            differs = {key: (got.get(key), value) for key, value in want.items() if got.get(key) != value}
            return f"record {number}: (syslog-ng's, ours) {differs}"
    return ""


def fields(helper, directory):
    certs = make_certificates(directory)
    tcp_port, tls_port = free_tcp_port(), free_tcp_port()
    tls = (f'tls(key-file("{certs["server-key"]}") cert-file("{certs["server"]}") ca-file("{certs["ca"]}") '
           "peer-verify(required-trusted))")
    outputs = {name: os.path.join(directory, f"{name}.jsonl") for name in ("tcp", "tls")}
    daemon = SyslogNg(directory, {
        "tcp": (f'syslog(ip("127.0.0.1") port({tcp_port}) transport("tcp"))', outputs["tcp"], PARSED),
        "tls": (f'syslog(ip("127.0.0.1") port({tls_port}) transport("tls") {tls})', outputs["tls"], PARSED)})
    trusted = ["transport=tls", f"ca={certs['ca']}", "server_name=localhost"]
    client = [f"cert={certs['client']}", f"key={certs['client-key']}"]
    daemon.start()
    try:
        for name, port, settings in (("tcp", tcp_port, []), ("tls", tls_port, trusted + client)):
            expected = os.path.join(directory, f"{name}.expected")
            pid, counters, _ = run_records(helper, port, expected, settings)
            if counters["unacknowledged_bytes"] != 0 or counters["dropped"] != 0 or counters["connects"] != 1:
                return fail(f"{name}: {counters}")
            # Acknowledged by syslog-ng's kernel: wait until it wrote them all.
            if not wait_until(lambda: count_lines(outputs[name]) >= RECORDS, 10):
                return fail(f"{name}: {count_lines(outputs[name])} of {RECORDS} records reached syslog-ng's file")
            if problem := check_fields(outputs[name], expected, pid):
                return fail(f"{name}: {problem}")
            print(f"{name}: {RECORDS} records, every header field and message exact")

        reasons = {"no client certificate": "refused the session after the handshake: Certificate is required",
                   "a client certificate from another CA": "refused the session after the handshake: CA is unknown"}
        if os.environ.get("FIELDLOG_TEST_EMULATED") == "1":
            # Under qemu-user the refusal may show as the connection cut: docs/platforms.md says why.
            reasons["a client certificate from another CA"] = (reasons["a client certificate from another CA"],
                                                                "Error in the push function")
        if problem := check_refusals(helper, tls_port, certs, directory, reasons):
            return fail(problem)
        if count_lines(outputs["tls"]) != RECORDS:
            return fail(f"a refused session delivered records: {count_lines(outputs['tls'])} lines")
    finally:
        daemon.stop()
    print("PASS")
    return 0


def restarts(helper, directory):
    port = free_tcp_port()
    bodies = os.path.join(directory, "bodies.log")
    daemon = SyslogNg(directory, {"tcp": (f'syslog(ip("127.0.0.1") port({port}) transport("tcp"))', bodies,
                                          "$MSG\\n")})
    dropped_path = os.path.join(directory, "dropped.txt")
    daemon.start()
    sender = subprocess.Popen([helper, "syslog-stream", f"127.0.0.1:{port}", "tcp", "-", str(BUFFER_BYTES),
                               dropped_path], stdout=subprocess.PIPE, text=True)
    started = time.monotonic()
    try:
        if sender.stdout.readline().strip() != "ready":
            return fail("the sender did not start")
        for restart in range(RESTARTS + 1):
            before = count_lines(bodies)
            if not wait_until(lambda: count_lines(bodies) > before + 1000, 20):
                return fail(f"restart {restart}: no records reached syslog-ng ({count_lines(bodies)} lines)")
            if restart < RESTARTS:
                daemon.stop()
                daemon.start()
        sender.send_signal(signal.SIGTERM)
        summary = sender.stdout.read().split()
        if sender.wait(timeout=60) != 0 or len(summary) != 12:
            return fail(f"the sender failed: {summary}")
        counters = dict(zip(summary[0::2], (int(n) for n in summary[1::2])))
        if counters["unacknowledged_bytes"] != 0:
            return fail(f"the receiver never acknowledged the whole buffer: {counters}")
        # Everything acknowledged is in syslog-ng's hands: wait until the file stops growing.
        last = -1
        while count_lines(bodies) != last:
            last = count_lines(bodies)
            time.sleep(0.2)
    finally:
        if sender.poll() is None:
            sender.kill()
            sender.wait()
        daemon.stop()
    elapsed = time.monotonic() - started

    delivery = Delivery(bodies, counters["records"], dropped_path)
    figures = f"syslog-ng, tcp, {RESTARTS} restarts by SIGTERM in {elapsed:.1f} s: " + delivery.figures(counters)
    print(figures)
    if problem := delivery.problem(counters):
        return fail(problem)
    if delivery.lost_runs > RESTARTS:
        return fail(f"records lost in {delivery.lost_runs} places, more than the {RESTARTS} stops")
    if delivery.twice_runs > RESTARTS:
        return fail(f"records twice in {delivery.twice_runs} places, more than once per stop")
    print("PASS: " + figures)
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("fields", "restarts"):
        print(__doc__)
        return 2
    if not (os.access(os.path.join(ROOT, "usr/sbin/syslog-ng"), os.X_OK) and module_directory()):
        print(f"SKIP: syslog-ng is not unpacked in {ROOT} (bash .ci/syslog-ng)")
        return 77
    if sys.argv[2] == "fields" and not shutil.which("openssl"):
        print("SKIP: openssl is not installed (apt-get install openssl)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-syslog-ng-") as directory:
        return (fields if sys.argv[2] == "fields" else restarts)(sys.argv[1], directory)


if __name__ == "__main__":
    sys.exit(main())
