# SPDX-License-Identifier: MIT
"""What the syslog sink's TLS tests against real receivers share: the test's certificates, a run
of the helper's syslog-records mode, and the cases a receiver that requires a client
certificate must refuse (no certificate, one from another CA) and the sink must refuse itself
(a wrong server_name, a server certificate it cannot trust). A refused case must deliver
nothing, say why on stderr, hold every record (not free it as delivered: closing counts it
dropped) and never make a log call wait.
"""
import json
import os
import subprocess

RECORDS = 300
SEVERITY = {"debug": "7", "info": "6", "warn": "4", "error": "3"}


def make_certificates(directory):
    """The test's CA, a server certificate for localhost / 127.0.0.1 and a client certificate
    signed by it, and a client certificate from another CA (EC keys: quick to make)."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    files = {}
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", *key, "-days", "2", "-subj", f"/CN=fieldlog test {ca}", "-keyout", f"{ca}-key.pem",
                "-out", f"{ca}.pem")
        files[ca] = os.path.join(directory, f"{ca}.pem")
    for name, ca, common_name, extension in (
            ("server", "ca", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
            ("client", "ca", "fieldlog client", "extendedKeyUsage=clientAuth"),
            ("stranger", "other-ca", "fieldlog client", "extendedKeyUsage=clientAuth")):
        with open(os.path.join(directory, f"{name}.ext"), "w") as ext:
            ext.write(extension + "\n")
        openssl("req", *key, "-subj", f"/CN={common_name}", "-keyout", f"{name}-key.pem", "-out", f"{name}.csr")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem",
                "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem")
        files[name] = os.path.join(directory, f"{name}.pem")
        files[f"{name}-key"] = os.path.join(directory, f"{name}-key.pem")
    return files


def run_records(helper, port, expected, settings):
    """Runs the helper's syslog-records mode; returns (its pid, its counters, its stderr)."""
    process = subprocess.Popen([helper, "syslog-records", f"127.0.0.1:{port}", str(RECORDS), expected, *settings],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()  # a close that hangs: fail, and leave no process behind
        process.wait()
        raise
    if process.returncode != 0:
        raise RuntimeError(f"the helper failed ({process.returncode}): {err}")
    words = out.split()
    return process.pid, dict(zip(words[0::2], (int(n) for n in words[1::2]))), err


def frame_bytes(line, pid):
    """The size of the octet-counted frame the sink makes of one JSON line (syslog_header.hpp)."""
    level = json.loads(line)["level"]
    head = f"<{16 * 8 + int(SEVERITY[level])}>1 2026-01-01T00:00:00.000000Z "  # the timestamp's width
    message = len(head) + len(f"fieldlog-host fieldlog-test {pid} - - ") + len(line.encode())
    return len(str(message)) + 1 + message


def check_refusals(helper, port, certs, directory, reasons, transport="tls"):
    """Runs the refused cases against the receiver on `port` over `transport` (tls or relp-tls);
    `reasons` gives what stderr must say for the two the receiver refuses (after "TLS handshake: ",
    or over relp-tls "RELP open: ": there the answer to RELP's open is the verdict), or a tuple of
    what it may say. "" or what went wrong."""
    over = f"transport={transport}"
    trusted = [over, f"ca={certs['ca']}", "server_name=localhost"]
    client = [f"cert={certs['client']}", f"key={certs['client-key']}"]
    cases = (
        ("no client certificate", trusted, reasons["no client certificate"]),
        ("a client certificate from another CA", trusted + [f"cert={certs['stranger']}", f"key={certs['stranger-key']}"],
         reasons["a client certificate from another CA"]),
        ("a wrong server_name", [over, f"ca={certs['ca']}", "server_name=elsewhere.example"] + client,
         "The name in the certificate does not match"),
        ("an untrusted server certificate", [over, f"ca={certs['other-ca']}", "server_name=localhost"] + client,
         "The certificate issuer is unknown"))
    for number, (case, settings, reason) in enumerate(cases):
        operation = "RELP open" if transport == "relp-tls" and number < 2 else "TLS handshake"
        expected = os.path.join(directory, f"refused-{number}.expected")
        pid, counters, err = run_records(helper, port, expected, settings)
        with open(expected) as data:
            held = sum(frame_bytes(line.rstrip("\n"), pid) for line in data)
        if counters["connects"] != 0 or counters["errors"] < 3:
            return f"{case}: the sink connected or did not retry: {counters}"
        if counters["unacknowledged_bytes"] != held or counters["dropped"] != 0:
            return (f"{case}: {counters['unacknowledged_bytes']} bytes held of the {held} it was given, "
                    f"{counters['dropped']} dropped before closing")
        alternatives = reason if isinstance(reason, tuple) else (reason,)
        if f"{operation}: " not in err or not any(r in err for r in alternatives):
            return f"{case}: stderr does not say '{operation}: ...{reason}': {err!r}"
        # Closing waits drain_timeout (the helper's 200 ms) for records still held, no longer.
        if counters["longest_call_us"] > 250_000 or not 200 <= counters["close_ms"] < 2000:
            return f"{case}: a log call took {counters['longest_call_us']} µs, closing {counters['close_ms']} ms"
        print(f"{case}: refused, all {RECORDS} records held (none freed as delivered), longest log call "
              f"{counters['longest_call_us']} µs, closing {counters['close_ms']} ms; stderr: {err.strip().splitlines()[0]}")
    return ""
