#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Strict JSON-lines checker for the tests: every line of each file must be one JSON object
(RFC 8259) and I-JSON clean (RFC 7493). Stricter than Python's json module alone: invalid UTF-8,
lone surrogates (raw or escaped), duplicate member names at any depth, NaN/Infinity, control
characters in strings, an empty line and anything after the value are all rejected.

Usage: jsonl_check.py FILE...   Prints one line per error (file:line: why); exit 0 when clean.
"""
import json
import sys


class LineError(Exception):
    pass


def reject_duplicates(pairs):
    members = {}
    for key, value in pairs:
        if key in members:
            raise LineError(f"duplicate member name {key!r}")
        members[key] = value
    return members


def reject_constant(name):
    raise LineError(f"{name} is not JSON")


def reject_surrogates(value):
    """Escaped lone surrogates (\\ud800) decode to str code points UTF-8 cannot encode."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            raise LineError(f"lone surrogate in {value[max(0, error.start - 8):error.end + 8]!r}") from None
    elif isinstance(value, dict):
        for key, member in value.items():
            reject_surrogates(key)
            reject_surrogates(member)
    elif isinstance(value, list):
        for element in value:
            reject_surrogates(element)


DECODER = json.JSONDecoder(object_pairs_hook=reject_duplicates, parse_constant=reject_constant, strict=True)


def check_line(raw):
    """Raises LineError unless `raw` (bytes, without the newline) is one JSON object."""
    try:
        text = raw.decode("utf-8", errors="strict")  # also refuses UTF-8-encoded surrogates
    except UnicodeDecodeError as error:
        raise LineError(f"invalid UTF-8 at byte {error.start}") from None
    if text.startswith("\ufeff"):
        raise LineError("byte order mark")
    if text.strip(" \t\r") == "":
        raise LineError("empty line")
    try:
        value, end = DECODER.raw_decode(text, len(text) - len(text.lstrip(" \t\r")))
    except json.JSONDecodeError as error:
        raise LineError(f"{error.msg} at column {error.colno}") from None
    if text[end:].strip(" \t\r") != "":
        raise LineError(f"trailing data at column {end + 1}")
    if not isinstance(value, dict):
        raise LineError(f"a record must be an object, not {type(value).__name__}")
    reject_surrogates(value)


def check_file(path):
    """The error lines for one file ([] when every line is a clean JSON object)."""
    errors = []
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        errors.append(f"{path}: the last line has no newline")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, 1):
        try:
            check_line(raw)
        except LineError as error:
            errors.append(f"{path}:{number}: {error}")
        except RecursionError:
            errors.append(f"{path}:{number}: nested too deeply to check")
    return errors


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    errors = [error for path in paths for error in check_file(path)]
    for error in errors:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
