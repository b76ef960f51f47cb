#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The syslog sink's TLS client certificate against Debian's real rsyslogd, which requires one.

Starts rsyslogd in the foreground with imtcp over rsyslog-gnutls, `StreamDriver.AuthMode=
"x509/certvalid"` (a client certificate signed by the test's CA) or, with `relp-tls`, imrelp
with tls="on" and tls.authMode="certvalid" (relp_stream_test.py's configuration), writing
`%msg%` of every message to one file through a Direct ruleset queue. With the test's client certificate every
record must arrive, byte for byte the line the sink was given. Then the cases of
syslog_tls_cases.py: rsyslog refuses no certificate and one from another CA (GnuTLS on its side
closes the session without an alert), the sink refuses a wrong server_name and a server
certificate it cannot trust; nothing arrives, every record is held, stderr says why.

usage: syslog_client_cert_test.py SINK_HELPER [tls|relp-tls]      exit 0 pass, 1 fail, 77 skipped
"""
import os
import shutil
import subprocess
import sys
import tempfile

from relp_stream_test import IMRELP, rsyslog_config as imrelp_config
from syslog_stream_test import GTLS, count_lines, fail, free_tcp_port, listening, wait_until
from syslog_tls_cases import RECORDS, check_refusals, make_certificates, run_records


def main():
    helper = sys.argv[1]
    transport = sys.argv[2] if len(sys.argv) > 2 else "tls"
    rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    module, package = (IMRELP, "rsyslog-relp") if transport == "relp-tls" else (GTLS, "rsyslog-gnutls")
    if not (os.access(rsyslogd, os.X_OK) and os.path.exists(module) and shutil.which("openssl")):
        print(f"SKIP: rsyslogd, its {transport} input or openssl is not installed (apt-get install rsyslog {package} openssl)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-client-cert-") as directory:
        certs = make_certificates(directory)
        port = free_tcp_port()
        bodies = os.path.join(directory, "bodies.log")
        config = os.path.join(directory, "rsyslog.conf")
        with open(config, "w") as out:
            if transport == "relp-tls":
                out.write(imrelp_config(directory, port, bodies, certs))
            else:
                out.write(f"""global(workDirectory="{directory}" maxMessageSize="64k"
       DefaultNetstreamDriverCAFile="{certs['ca']}" DefaultNetstreamDriverCertFile="{certs['server']}"
       DefaultNetstreamDriverKeyFile="{certs['server-key']}")
module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="x509/certvalid")
template(name="body" type="string" string="%msg%\\n")
ruleset(name="fieldlog" queue.type="Direct") {{
    action(type="omfile" file="{bodies}" template="body")
}}
input(type="imtcp" address="127.0.0.1" port="{port}" ruleset="fieldlog")
""")
        daemon = subprocess.Popen([rsyslogd, "-n", "-f", config, "-i", os.path.join(directory, "rsyslogd.pid")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if not wait_until(lambda: listening(port), 10):
                return fail("rsyslogd did not listen")
            expected = os.path.join(directory, "accepted.expected")
            _, counters, _ = run_records(helper, port, expected, [
                f"transport={transport}", f"ca={certs['ca']}", "server_name=localhost", f"cert={certs['client']}",
                f"key={certs['client-key']}"])
            if counters["unacknowledged_bytes"] != 0 or counters["dropped"] != 0 or counters["connects"] != 1:
                return fail(f"with the client certificate: {counters}")
            if not wait_until(lambda: count_lines(bodies) >= RECORDS, 10):
                return fail(f"{count_lines(bodies)} of {RECORDS} records reached rsyslog's file")
            with open(bodies, "rb") as got, open(expected, "rb") as want:
                if got.read() != want.read():
                    return fail("rsyslog's %msg% differs from the lines the sink was given")
            print(f"with the client certificate: {RECORDS} records, each message exact")

            closed = "closed the session after the handshake"
            if problem := check_refusals(helper, port, certs, directory, {
                    "no client certificate": closed, "a client certificate from another CA": closed}, transport):
                return fail(problem)
            if count_lines(bodies) != RECORDS:
                return fail(f"a refused session delivered records: {count_lines(bodies)} lines")
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
