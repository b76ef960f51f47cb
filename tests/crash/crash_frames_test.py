#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The `fatal` record's frames against known call chains.

Runs tests/crash/crash_frames_child.cpp once per case (a fault in the executable, in a shared
library, in an inlined function, on another thread, a stack overflow, std::terminate with an
exception, a stack the unwinder cannot walk to its end), in sync and async mode, and checks: the process died by its signal; every record
logged before the crash is in the log, in order, then the `fatal` record; its frames, innermost
first, start where the crash happened and follow the call chain, with the module and offset of
each; and tools/symbolize_crash.py names each function of the chain with the file and line the
child marks "crash site:". Then the same crash in the other formats and the journald sink.

    crash_frames_test.py <fieldlog_crash_frames_child> <tools/symbolize_crash.py>
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile

RECORDS = 50  # crash_frames_child.cpp's g_records (none for journald)
MAX_FRAMES = 32  # kMaxCrashFrames
SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))

# Per case: the signal, and the call chain the frames must hold, innermost first, each as a part
# of the (mangled) exported name the handler writes. The first is the crashing frame itself,
# except after std::terminate, whose frames start in abort().
CASES = {
    "executable": (signal.SIGSEGV, ["fault_in_executable", "enter_executable", "main"]),
    "library": (signal.SIGSEGV, ["fault_in_library", "enter_library", "main"]),
    "inlined": (signal.SIGSEGV, ["enter_inlined", "main"]),
    "thread": (signal.SIGSEGV, ["fault_in_thread", "thread_body"]),
    "overflow": (signal.SIGSEGV, ["recurse"] * MAX_FRAMES),
    "terminate": (signal.SIGABRT, ["throw_uncaught", "enter_terminate"]),
    # The walk faults past these two: the frames found before it stay.
    "smashed": (signal.SIGSEGV, ["smash_and_fault", "enter_smashed"]),
}

# Per case: the symbolized chain, innermost first, as (function, source file, marked line or
# None). The inlined function comes before the one it was inlined into.
SYMBOLIZED = {
    "executable": [("crash_site::fault_in_executable(int*)", "crash_frames_child.cpp", "executable"),
                   ("crash_site::enter_executable()", "crash_frames_child.cpp", None),
                   ("main", "crash_frames_child.cpp", None)],
    "library": [("crash_library::fault_in_library(int*)", "crash_frames_library.cpp", "library"),
                ("crash_site::enter_library()", "crash_frames_child.cpp", None),
                ("main", "crash_frames_child.cpp", None)],
    "inlined": [("crash_site::inlined_fault(int*)", "crash_frames_child.cpp", "inlined"),
                ("crash_site::enter_inlined()", "crash_frames_child.cpp", None),
                ("main", "crash_frames_child.cpp", None)],
    "thread": [("crash_site::fault_in_thread(int*)", "crash_frames_child.cpp", "thread"),
               ("crash_site::thread_body()", "crash_frames_child.cpp", None)],
    "overflow": [("crash_site::recurse(int)", "crash_frames_child.cpp", None)],
    "terminate": [("crash_site::throw_uncaught()", "crash_frames_child.cpp", "terminate"),
                  ("crash_site::enter_terminate()", "crash_frames_child.cpp", None)],
    "smashed": [("crash_site::smash_and_fault(int*)", "crash_frames_smash.cpp", "smashed"),
                ("crash_site::enter_smashed(int*)", "crash_frames_smash.cpp", None)],
}

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def marked_line(case):
    """The line the child's sources mark `crash site: <case>`."""
    for name in ("crash_frames_child.cpp", "crash_frames_library.cpp", "crash_frames_smash.cpp"):
        with open(os.path.join(SOURCE_DIR, name), encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                if line.rstrip().endswith("// crash site: " + case):
                    return number
    raise AssertionError("no line marked: crash site: " + case)


def run_child(child, case, mode, form, path):
    """Runs the child to its end; returns its exit status (negative: killed by that signal)."""
    try:
        return subprocess.run([child, case, mode, form, path], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60, check=False).returncode
    except subprocess.TimeoutExpired:
        return "hung"


def chain_index(functions, chain):
    """Where `chain` starts as consecutive frames in `functions`, or -1."""
    for start in range(len(functions) - len(chain) + 1):
        if all(part in functions[start + i] for i, part in enumerate(chain)):
            return start
    return -1


def check_frames(label, case, frames, child):
    signo, chain = CASES[case]
    functions = [frame.get("function", "") for frame in frames]
    start = chain_index(functions, chain)
    check(start >= 0, f"{label}: the frames {functions} hold the chain {chain}")
    if case != "terminate":
        check(start == 0, f"{label}: the first frame is the crashing function, not the handler's: {functions}")
    if case == "thread":
        check("main" not in functions, f"{label}: a thread's frames do not reach main: {functions}")
    if case == "smashed":
        check(len(frames) == 2, f"{label}: the two frames before the walk faulted: {functions}")
    if case == "overflow":
        check(len(frames) == MAX_FRAMES, f"{label}: {len(frames)} frames, the cap is {MAX_FRAMES}")
    executable = os.path.realpath(child)
    biases = {}
    for frame in frames:
        check(re.fullmatch(r"0x[0-9a-f]+", frame.get("address", "")) is not None, f"{label}: address of {frame}")
        if "module" not in frame:
            continue
        # One module, one load address: address - offset is the same for all its frames.
        biases.setdefault(frame["module"], set()).add(int(frame["address"], 16) - int(frame["offset"], 16))
    check(all(len(b) == 1 for b in biases.values()), f"{label}: one load address per module: {biases}")
    for frame in frames:
        name = frame.get("function", "")
        if "fault_in_library" in name:
            check(frame.get("module", "").endswith("/libfieldlog_crash_frames_library.so"),
                  f"{label}: the library's frame names the library: {frame}")
        elif "crash_site" in name or name == "main":
            check(frame.get("module") == executable, f"{label}: the executable's frame names it: {frame}")


def check_symbolized(label, case, log, tool):
    result = subprocess.run([sys.executable, tool, log], capture_output=True, text=True, check=False)
    if not check(result.returncode == 0, f"{label}: symbolize_crash.py exits 0: {result.stderr}"):
        return
    lines = [line.split(" ", 1)[1] for line in result.stdout.splitlines()[1:] if line.startswith("#")]
    wanted = SYMBOLIZED[case]
    for start in range(len(lines)):
        if lines[start].startswith(wanted[0][0] + " "):
            break
    else:
        check(False, f"{label}: symbolized, {wanted[0][0]} among {lines}")
        return
    for (function, source, mark), line in zip(wanted, lines[start:]):
        where = line[len(function) + 1:].split(" ")[0] if line.startswith(function + " ") else ""
        ok = where.rsplit(":", 1)[0].endswith("/" + source)
        if mark is not None:
            ok = ok and where.endswith(f":{marked_line(mark)}")
        check(ok, f"{label}: symbolized {function} at {source}" + (f":{marked_line(mark)}" if mark else "") +
              f", got {line!r}")
    check(len(lines) - start >= len(wanted), f"{label}: the symbolized chain {wanted} in {lines[start:]}")


def check_log_case(child, tool, directory, case, mode):
    label = f"{case} ({mode})"
    log = os.path.join(directory, f"{case}_{mode}.log")
    status = run_child(child, case, mode, "json", log)
    signo = CASES[case][0]
    check(status == -signo, f"{label}: the child dies by {signo.name}, got {status}")
    with open(log, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    check(len(lines) == RECORDS + 1, f"{label}: {RECORDS} records and the fatal one, got {len(lines)} lines")
    numbers = [line.get("n") for line in lines if line.get("msg") == "record"]
    check(numbers == list(range(RECORDS)), f"{label}: every record before the crash, in order: {numbers}")
    fatal = lines[-1]
    check(fatal.get("level") == "fatal" and fatal.get("signal") == signo.name, f"{label}: the fatal record {fatal}")
    check_frames(label, case, fatal.get("frames", []), child)
    check(fatal.get("frames_cut", False) == (case == "overflow"), f"{label}: frames_cut only when cut")
    if case == "terminate":
        check(fatal.get("exception") == {"type": "std::runtime_error", "what": "no more widgets"},
              f"{label}: the uncaught exception's type and what(): {fatal.get('exception')}")
    else:
        check("exception" not in fatal, f"{label}: no exception without std::terminate")
    check_symbolized(label, case, log, tool)


def check_text_format(child, directory, form):
    """logfmt and console: the line holds the frames' names in order."""
    log = os.path.join(directory, f"executable_{form}.log")
    check(run_child(child, "executable", "sync", form, log) == -signal.SIGSEGV, f"{form}: dies by SIGSEGV")
    with open(log, encoding="utf-8") as f:
        lines = f.read().splitlines()
    check(len(lines) == RECORDS + 1, f"{form}: {RECORDS} records and the fatal one")
    fatal = lines[-1]
    positions = [fatal.find(name) for name in CASES["executable"][1][:2]]
    check(-1 not in positions and positions == sorted(positions), f"{form}: the frames in order in {fatal}")
    check(os.path.realpath(child) in fatal, f"{form}: the module in {fatal}")


def check_otel(child, tool, directory):
    log = os.path.join(directory, "terminate_otel.log")
    check(run_child(child, "terminate", "async", "otel", log) == -signal.SIGABRT, "otel: dies by SIGABRT")
    with open(log, encoding="utf-8") as f:
        fatal = json.loads(f.read().splitlines()[-1])
    attributes = fatal.get("attributes", {})
    check(attributes.get("exception.type") == "std::runtime_error", f"otel: exception.type in {attributes}")
    check(attributes.get("exception.message") == "no more widgets", f"otel: exception.message in {attributes}")
    text = attributes.get("exception.stacktrace", "")
    lines = text.splitlines()
    check(all(re.match(r"#\d+ 0x[0-9a-f]+( in \S+)? \(.+\+0x[0-9a-f]+\)$", line) for line in lines),
          f"otel: one frame a line in exception.stacktrace: {text!r}")
    check(chain_index(lines, CASES["terminate"][1]) >= 0, f"otel: the chain in {text!r}")
    check_symbolized("terminate (otel)", "terminate", log, tool)


def journald_fields(entry):
    """journald's native protocol: KEY=value lines, or KEY, a 64-bit length and the bytes."""
    fields = {}
    at = 0
    while at < len(entry):
        end = entry.index(b"\n", at)
        line = entry[at:end]
        if b"=" in line:
            key, value = line.split(b"=", 1)
            at = end + 1
        else:
            size = int.from_bytes(entry[end + 1:end + 9], "little")
            key, value = line, entry[end + 9:end + 9 + size]
            at = end + 9 + size + 1
        fields[key.decode()] = value.decode()
    return fields


def check_journald(child, directory):
    path = os.path.join(directory, "journal.socket")
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(path)
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    check(run_child(child, "library", "sync", "journald", path) == -signal.SIGSEGV, "journald: dies by SIGSEGV")
    receiver.setblocking(False)
    entries = []
    try:
        while True:
            entries.append(journald_fields(receiver.recv(1 << 17)))
    except BlockingIOError:
        pass
    receiver.close()
    check(len(entries) == 1, f"journald: the fatal entry alone, got {len(entries)}")
    if not entries:
        return
    fatal = entries[-1]
    check(fatal.get("PRIORITY") == "2" and fatal.get("SIGNAL") == "SIGSEGV", f"journald: the fatal entry {fatal}")
    frames = json.loads(fatal.get("FRAMES", "[]"))
    check_frames("journald", "library", frames, child)


def main():
    child, tool = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as directory:
        for case in CASES:
            for mode in ("sync", "async"):
                check_log_case(child, tool, directory, case, mode)
        for form in ("logfmt", "console"):
            check_text_format(child, directory, form)
        check_otel(child, tool, directory)
        check_journald(child, directory)
    for failure in failures:
        print("FAILED:", failure)
    print("crash_frames_test:", "failed" if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
