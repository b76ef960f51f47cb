#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Records per second through the syslog sinks, to real receivers, and through the file sink,
in one run (by hand, not in CTest; docs/performance.md, "Sinks to real receivers"; the journald
sink has its own, bench/journald_burst.py).

Starts, on loopback: rsyslogd with imtcp, imrelp and imrelp over TLS (tls="on", a client
certificate required, certvalid), and a second rsyslogd with imtcp over TLS (rsyslog-gnutls: one
imtcp module has one stream driver), each input writing `%msg%` to a file of its own through a
Direct ruleset queue. The certificates are syslog_tls_cases.py's. Then the helper's throughput
mode logs COUNT records (the same record each time, one thread, synchronous) through each sink
in turn, then through the file sink, and prints per sink: records/s handed over (COUNT over the
time the log calls took), records/s taken (the records the receiver took over the time until it
had taken them all: TCP-acknowledged for tcp and tls, answered for relp and relp-tls, flushed by
shutdown() for the file) and the drops. This script prints them as a table, with what the
receiver stored: the lines each rsyslog file holds once it stops growing.

usage: sink_throughput.py SINK_HELPER [COUNT]      exit 0 done, 1 failed, 77 skipped
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from relp_stream_test import IMRELP, rsyslog_config as imrelp_config
from syslog_stream_test import GTLS, count_lines, fail, free_tcp_port, listening, wait_until
from syslog_tls_cases import make_certificates

def rsyslog_config(directory, inputs, certs):
    """One rsyslogd: `inputs` maps a name to (port, kind), kind imtcp, imtcp-tls, imrelp or
    imrelp-tls; each input's %msg% goes to <directory>/<name>.log."""
    kinds = {kind for _, kind in inputs.values()}
    lines = [f'global(workDirectory="{directory}" maxMessageSize="64k"']
    if "imtcp-tls" in kinds:
        lines[0] += (f'\n       DefaultNetstreamDriverCAFile="{certs["ca"]}" DefaultNetstreamDriverCertFile="{certs["server"]}"'
                     f'\n       DefaultNetstreamDriverKeyFile="{certs["server-key"]}"')
        lines.append('module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")')
    elif "imtcp" in kinds:
        lines.append('module(load="imtcp")')
    lines[0] += ")"
    if kinds & {"imrelp", "imrelp-tls"}:
        lines.append('module(load="imrelp")')
    lines.append('template(name="body" type="string" string="%msg%\\n")')
    for name, (port, kind) in inputs.items():
        lines.append(f'ruleset(name="{name}" queue.type="Direct") {{\n'
                     f'    action(type="omfile" file="{os.path.join(directory, name)}.log" template="body")\n}}')
        module = "imrelp" if kind.startswith("imrelp") else "imtcp"
        tls = ""
        if kind == "imrelp-tls":
            tls = (f' tls="on" tls.authMode="certvalid" tls.cacert="{certs["ca"]}"'
                   f' tls.mycert="{certs["server"]}" tls.myprivkey="{certs["server-key"]}"')
        lines.append(f'input(type="{module}" address="127.0.0.1" port="{port}" ruleset="{name}"{tls})')
    return "\n".join(lines) + "\n"


def settle(path):
    """The lines in `path` once it stops growing."""
    last = -1
    while count_lines(path) != last:
        last = count_lines(path)
        time.sleep(0.2)
    return last


def main():
    helper = sys.argv[1]
    count = sys.argv[2] if len(sys.argv) > 2 else "500000"
    rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
    if not (os.access(rsyslogd, os.X_OK) and os.path.exists(GTLS) and os.path.exists(IMRELP) and shutil.which("openssl")):
        print("SKIP: rsyslogd, its TLS driver or RELP input, or openssl is not installed "
              "(apt-get install rsyslog rsyslog-gnutls rsyslog-relp openssl)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fieldlog-throughput-") as directory:
        certs = make_certificates(directory)
        ports = {name: free_tcp_port() for name in ("tcp", "tls", "relp", "relp-tls")}
        daemons = []
        receivers = (({"tcp": (ports["tcp"], "imtcp"), "relp": (ports["relp"], "imrelp"),
                       "relp-tls": (ports["relp-tls"], "imrelp-tls")}),
                     ({"tls": (ports["tls"], "imtcp-tls")}))
        try:
            for number, inputs in enumerate(receivers):
                work = os.path.join(directory, f"rsyslog-{number}")
                os.mkdir(work)
                config = os.path.join(work, "rsyslog.conf")
                with open(config, "w") as out:
                    out.write(rsyslog_config(work, inputs, certs))
                daemons.append(subprocess.Popen([rsyslogd, "-n", "-f", config, "-i", os.path.join(work, "rsyslogd.pid")],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            if not wait_until(lambda: all(listening(port) for port in ports.values()), 10):
                return fail("rsyslogd did not listen")
            targets = [f"{name}=127.0.0.1:{port}" for name, port in ports.items()]
            run = subprocess.run([helper, "throughput", os.path.join(directory, "file.log"), count, *targets,
                                  f"ca={certs['ca']}", f"cert={certs['client']}", f"key={certs['client-key']}"],
                                 capture_output=True, text=True, timeout=900)
            if run.returncode != 0:
                return fail(f"the helper failed ({run.returncode}): {run.stderr}")
            stored = {name: settle(os.path.join(directory, f"rsyslog-{0 if name != 'tls' else 1}", f"{name}.log"))
                      for name in ports}
        finally:
            for daemon in daemons:
                daemon.terminate()
                daemon.wait(timeout=30)

    print(f"{count} records a sink, one thread, synchronous")
    print("| sink | handed over (records/s) | taken by the receiver (records/s) | taken | dropped (counted) "
          "| stored by the receiver |")
    print("|---|---|---|---|---|---|")
    for line in run.stdout.splitlines():
        name, *pairs = line.split()
        figures = dict(zip(pairs[0::2], (int(n) for n in pairs[1::2])))
        if figures["unacknowledged_bytes"] != 0:
            return fail(f"{name}: the receiver did not take every record: {line}")
        label = f"syslog, {name}" if name in ports else name
        print(f"| {label} | {figures['handed_over_per_s']:,} | {figures['taken_per_s']:,} | {figures['taken']:,} "
              f"| {figures['dropped']:,} | {f'{stored[name]:,}' if name in stored else '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
