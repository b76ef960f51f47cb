#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The JSON-lines checker's own test: each line it must refuse, each it must accept, run through
the command line the C++ tests use (one file per case, exit status and message checked)."""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jsonl_check.py")

ACCEPTED = [
    (b'{"ts":"2026-11-30T08:38:11.123456789Z","level":"info","msg":"ok"}\n', "a record"),
    (b'{}\n', "an empty object"),
    (b'{"a":{"b":1},"c":{"b":2}}\n', "the same key in two objects"),
    (b'{"s":"\\ud83d\\ude00 \xc3\xa9 \xef\xbf\xbd \\u0000 \x7f"}\n', "a surrogate pair, UTF-8, U+FFFD, \\u0000, DEL"),
    (b'{"n":-0.5e-3,"big":18446744073709551615,"t":true,"f":false,"z":null,"a":[1,[2,{}]]}\n', "every kind"),
    (b' {"a":1} \r\n', "whitespace around the value"),
    (b'{"a":1}\n{"b":2}\n', "two lines"),
    (b'', "an empty file"),
]

REFUSED = [
    (b'{"a":1,"a":2}\n', "duplicate member name"),
    (b'{"o":{"k":1,"k":1}}\n', "duplicate member name"),
    (b'[{"k":1,"k":2}]\n', "duplicate member name"),
    (b'{"s":"\\ud800"}\n', "lone surrogate"),
    (b'{"s":"\\udc00x"}\n', "lone surrogate"),
    (b'{"\\ud800":1}\n', "lone surrogate"),
    (b'{"s":"\xed\xa0\x80"}\n', "invalid UTF-8"),
    (b'{"s":"\xff"}\n', "invalid UTF-8"),
    (b'{"s":"\xc3"}\n', "invalid UTF-8"),
    (b'{"s":"\xc0\xaf"}\n', "invalid UTF-8"),
    (b'{"s":"a\x01b"}\n', "Invalid control character"),
    (b'{"s":"tab\there"}\n', "Invalid control character"),
    (b'{"a":1} x\n', "trailing data"),
    (b'{"a":1}{"b":2}\n', "trailing data"),
    (b'{"a":1,}\n', "Expecting property name"),
    (b'{"a":NaN}\n', "NaN is not JSON"),
    (b'{"a":-Infinity}\n', "-Infinity is not JSON"),
    (b'{"a":01}\n', "Expecting"),
    (b"{'a':1}\n", "Expecting property name"),
    (b'{"a":1}\n\n', "empty line"),
    (b'[1,2]\n', "must be an object"),
    (b'"text"\n', "must be an object"),
    (b'\xef\xbb\xbf{"a":1}\n', "byte order mark"),
    (b'{"a":1}', "no newline"),
    (b'{"a":"x\n"}\n', "Unterminated string"),
]


def run(data):
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
        f.write(data)
        path = f.name
    try:
        result = subprocess.run([sys.executable, CHECKER, path], capture_output=True, text=True, check=False)
        return result.returncode, result.stdout + result.stderr
    finally:
        os.unlink(path)


def main():
    failures = 0
    for data, why in ACCEPTED:
        status, output = run(data)
        if status != 0:
            failures += 1
            print(f"FAIL accepted case ({why}) {data!r}: status {status}: {output.strip()}")
    for data, expected in REFUSED:
        status, output = run(data)
        if status != 1 or expected not in output:
            failures += 1
            print(f"FAIL refused case {data!r}: status {status}, wanted {expected!r} in: {output.strip()}")
    no_args = subprocess.run([sys.executable, CHECKER], capture_output=True, text=True, check=False)
    if no_args.returncode != 2:
        failures += 1
        print(f"FAIL no arguments: status {no_args.returncode}")
    total = len(ACCEPTED) + len(REFUSED) + 1
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
