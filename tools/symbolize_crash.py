#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the frames of fieldlog's `fatal` records into `function file:line`, with addr2line.

The crash handler writes each frame's module and its offset in that module, and a function's
name only where the module exports it (docs/crashes-signals-fork.md). This tool asks addr2line
(binutils) for the rest, from the modules' debug info: the function, its file and line, and the
functions inlined there. Run it where the same builds of the modules are (their paths as the
record names them, or mapped with --module OLD=NEW).

    python3 tools/symbolize_crash.py app.log            # JSON lines (json or otel format)
    journalctl -o json -u app | python3 tools/symbolize_crash.py

For each `fatal` record with frames it prints the record's message, then a line per frame,
innermost first: `#N function file:line`; a function inlined at that place comes first, marked
`(inlined)`. Where addr2line knows nothing, the record's own name (demangled) and
`module+offset` stand instead. Python's standard library only.
(The otel format's text marks cut frames with a last line "...", which is printed as it is.)
"""
import argparse
import json
import re
import subprocess
import sys

ADDRESS_LINE = re.compile(r"0x[0-9a-f]+")
# The otel format's exception.stacktrace, one line a frame (src/encode/final_record.cpp).
STACKTRACE_LINE = re.compile(r"#\d+ 0x([0-9a-f]+)(?: in (\S+))?(?: \((.+)\+0x([0-9a-f]+)\))?$")


def frames_of(record):
    """The record's frames as dicts (address, module, offset, function), or None."""
    if isinstance(record.get("frames"), list):  # the json format
        return record["frames"]
    if isinstance(record.get("FRAMES"), str):  # journalctl -o json: the journald sink's field
        return json.loads(record["FRAMES"])
    text = (record.get("attributes") or {}).get("exception.stacktrace")
    if isinstance(text, str):  # the otel format
        frames = []
        for line in text.splitlines():
            match = STACKTRACE_LINE.match(line)
            if match:
                address, function, module, offset = match.groups()
                frames.append({"address": "0x" + address, "function": function or "",
                               "module": module or "", "offset": "0x" + offset if offset else ""})
        return frames
    return None


def message_of(record):
    return record.get("msg") or record.get("body") or record.get("MESSAGE") or "fatal"


def addr2line(module, offsets):
    """Per offset, a list of (function, file:line), the innermost inlined function first."""
    result = subprocess.run(["addr2line", "-f", "-i", "-C", "-a", "-e", module] + [hex(o) for o in offsets],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return [[] for _ in offsets]
    places = []
    for line in result.stdout.splitlines():
        if ADDRESS_LINE.fullmatch(line):  # -a: each address's answer starts with it
            places.append([])
        elif places:
            places[-1].append(line)
    return [[(p[i], p[i + 1]) for i in range(0, len(p) - 1, 2)] for p in places]


def demangle(names):
    if not names:
        return {}
    result = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=False)
    lines = result.stdout.splitlines() if result.returncode == 0 else names
    return dict(zip(names, lines))


def symbolize(frames, module_map):
    """The printed lines for one record's frames."""
    # The first frame is where the signal struck; the others are return addresses, looked up one
    # byte earlier so that a call that ends its function is found in that function.
    lookups = {}
    for index, frame in enumerate(frames):
        if frame.get("module") and frame.get("offset"):
            module = module_map.get(frame["module"], frame["module"])
            offset = int(frame["offset"], 16) - (0 if index == 0 else 1)
            lookups.setdefault(module, []).append((index, offset))
    places = {}
    for module, wanted in lookups.items():
        for (index, _), found in zip(wanted, addr2line(module, [o for _, o in wanted])):
            # Without debug info addr2line guesses from the nearest symbol: only a place it knows.
            places[index] = [(f, where) for f, where in found if f != "??" and not where.startswith("??")]
    names = demangle(sorted({f.get("function") for f in frames if f.get("function")}))
    lines = []
    for index, frame in enumerate(frames):
        found = places.get(index) or []
        if not found:
            name = names.get(frame.get("function"), "??") if frame.get("function") else "??"
            where = f"{frame['module']}+{frame['offset']}" if frame.get("module") else frame.get("address", "?")
            lines.append(f"#{index} {name} {where}")
            continue
        for level, (function, where) in enumerate(found):
            inlined = " (inlined)" if level < len(found) - 1 else ""
            lines.append(f"#{index} {function} {where}{inlined}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", help="JSON lines holding fatal records (default: standard input)")
    parser.add_argument("--module", action="append", default=[], metavar="OLD=NEW",
                        help="read the module the record names OLD from NEW (repeatable)")
    args = parser.parse_args()
    module_map = {}
    for pair in args.module:
        if "=" not in pair:
            parser.error(f"--module {pair}: write it as --module /path/in/the/record=/path/here")
        old, new = pair.split("=", 1)
        module_map[old] = new
    source = open(args.log, encoding="utf-8") if args.log else sys.stdin
    found = 0
    with source:
        for line in source:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            frames = frames_of(record) if isinstance(record, dict) else None
            if not frames:
                continue
            found += 1
            print(message_of(record))
            for out in symbolize(frames, module_map):
                print(out)
            if record.get("frames_cut") is True or record.get("FRAMES_CUT") == "true":
                print("... (more frames, cut)")
    if found == 0:
        print("symbolize_crash.py: no record with frames (a fatal record in the json or otel format, "
              "or journalctl -o json)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
