#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keeps the manual true. Reads README.md and docs/*.md when it runs, so a new page is checked
without reconfiguring. Every failure names the page and the line. Stdlib only.
  cpp:       each ```cpp block is a whole translation unit: it compiles (-fsyntax-only, C++20,
             -Wall -Wextra; warnings are shown, not fatal) with the library's include path; at
             most two compilers at a time.
  toml:      each ```toml block parses with fieldlog's own reader (the fieldlog_doc_toml helper).
  reference: docs/configuration.md documents every key the reader knows, and no other, in table
             rows "| `key` | ..."; and the environment variables. Exits 77 (skipped) while the
             page does not exist.
  getting-started: docs/getting-started.md's configuration, run by its first program (the
             fieldlog_doc_run helper) in an empty directory: the terminal line starts with the
             short time, and each line of the file sink's file has a full RFC 3339 `ts`.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
ENVIRONMENT = ["FIELDLOG_CONFIG", "FIELDLOG_LEVEL", "FIELDLOG_FORMAT", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME"]
# Far (more than two edits) from every real key, so the reader lists the known keys rather
# than suggesting the nearest one.
PROBE_KEY = "zzqqx_not_a_key"


def pages(root):
    """README.md and docs/*.md, as paths relative to root."""
    names = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        names += sorted("docs/" + n for n in os.listdir(docs) if n.endswith(".md"))
    return names


def blocks(text, language):
    """(line of the opening fence, line of the first content line, content) for each fenced
    block in `language`; a block indented in a list loses that indentation."""
    found = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, info = len(match.group(1)), match.group(2), match.group(3)
        start = i
        body = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            i += 1
        i += 1
        if info == language:
            found.append((start + 1, start + 2, "\n".join(body) + "\n"))
    return found


def read(root, page):
    with open(os.path.join(root, page), encoding="utf-8") as f:
        return f.read()


def check_cpp(args):
    with open(args.flags, encoding="utf-8") as f:
        flags = [line.strip() for line in f if line.strip()]
    jobs = []
    with tempfile.TemporaryDirectory(prefix="fieldlog-doc-cpp-") as tmp:
        for page in pages(args.root):
            for fence_line, first_line, body in blocks(read(args.root, page), "cpp"):
                source = os.path.join(tmp, f"{page.replace('/', '_')}_{fence_line}.cpp")
                with open(source, "w", encoding="utf-8") as f:
                    # Diagnostics then name the page and its lines, not the temporary file.
                    f.write(f'#line {first_line} "{page}"\n{body}')
                # The project's own warning policy (cmake/FieldlogWarnings.cmake): g++ 12 flags
                # designated initialisers that leave out defaulted members.
                command = [args.compiler, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra",
                           "-Wno-missing-field-initializers", *flags, source]
                jobs.append((page, fence_line, command))

        def run(job):
            page, fence_line, command = job
            done = subprocess.run(command, capture_output=True, text=True)
            return page, fence_line, done.returncode, done.stderr

        failed = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for page, fence_line, code, stderr in pool.map(run, jobs):
                if code != 0:
                    first_error = next((line for line in stderr.split("\n") if " error: " in line), "")
                    failed.append(f"{page}:{fence_line}: {first_error}")
                    print(f"FAIL {page}:{fence_line}: this ```cpp block does not compile as a whole file:")
                    print(stderr.rstrip())
                elif stderr.strip():
                    print(f"warn {page}:{fence_line}: this ```cpp block compiles with warnings:")
                    print(stderr.rstrip())
                else:
                    print(f"ok   {page}:{fence_line}")
    # A summary after the compilers' output: each failed block and its first error.
    for failure in failed:
        print(f"failed: {failure}")
    print(f"{len(jobs)} ```cpp blocks, {len(failed)} failed")
    return 1 if failed else 0


def parse_toml(parser, source, text, cwd):
    """(True, "ok") or (False, the reader's error) for `text` read as `source`."""
    done = subprocess.run([parser, source], input=text, capture_output=True, text=True, cwd=cwd)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{parser} failed ({done.returncode}): {done.stderr.strip()}")
    return done.returncode == 0, done.stdout.strip()


# The reader checks that a file sink's path can be written and a syslog sink's certificate
# files read: facts about this machine, not the page. Such a value is swapped for a temporary
# file on the same line, and the block read again, so every other key is still checked.
FILE_PROBLEM = re.compile(r"^.*?:(\d+): (?:\S+\.)?(\w+): cannot (open|read) ")


def parse_block(parser, page, fence_line, body, tmp):
    # Padding puts each line where it stands on the page: errors then give the page's line.
    lines = ("\n" * fence_line + body).split("\n")
    for swap in range(100):
        ok, message = parse_toml(parser, page, "\n".join(lines), tmp)
        problem = FILE_PROBLEM.match(message)
        if ok or not problem:
            return ok, message
        line, key, verb = int(problem.group(1)), problem.group(2), problem.group(3)
        stand_in = os.path.join(tmp, f"stand-in-{swap}")
        if verb == "read":
            open(stand_in, "w").close()
        new_line = re.sub(rf"^(\s*{key}\s*=\s*).*$", rf'\g<1>"{stand_in}"', lines[line - 1])
        if new_line == lines[line - 1]:
            return ok, message
        lines[line - 1] = new_line
    return ok, message


def check_toml(args):
    count = failed = 0
    with tempfile.TemporaryDirectory(prefix="fieldlog-doc-toml-") as tmp:
        for page in pages(args.root):
            for fence_line, _, body in blocks(read(args.root, page), "toml"):
                count += 1
                ok, message = parse_block(args.parser, page, fence_line, body, tmp)
                if ok:
                    print(f"ok   {page}:{fence_line}")
                else:
                    failed += 1
                    print(f"FAIL {page}:{fence_line}: this ```toml block does not parse: {message}")
    print(f"{count} ```toml blocks, {failed} failed")
    return 1 if failed else 0


def known_keys(parser, probe, tmp):
    """The keys the reader lists when `probe` (a document with PROBE_KEY in one table) fails."""
    ok, message = parse_toml(parser, "probe", probe, tmp)
    match = re.search(r"\(known keys: ([^)]*)\)", message)
    if ok or match is None:
        raise SystemExit(f"the reader's error no longer lists known keys; probe:\n{probe}\ngot: {message}")
    return match.group(1).split()


def parser_tables(parser, tmp):
    """{table name: [keys]} as the reader knows them, and the top-level keys that are tables
    (levels and resource are free-form: any logger or attribute name)."""
    top = known_keys(parser, f"{PROBE_KEY} = 1\n", tmp)
    tables = {"top level": top}
    sections = []
    for key in top:
        ok, message = parse_toml(parser, "probe", f'{key} = "{PROBE_KEY}"\n', tmp)
        if not ok and re.search(r"expected .*(table|\[\[)", message):
            sections.append(key)
    tables["[async]"] = known_keys(parser, f"[async]\n{PROBE_KEY} = 1\n", tmp)
    tables["[sampling.NAME]"] = known_keys(parser, f"[sampling.app]\n{PROBE_KEY} = 1\n", tmp)
    tables["[backtraces.NAME]"] = known_keys(parser, f"[backtraces.app]\n{PROBE_KEY} = 1\n", tmp)
    ok, message = parse_toml(parser, "probe", f'[[sinks]]\ntype = "{PROBE_KEY}"\n', tmp)
    match = re.search(r"type: expected (.*), got", message)
    if ok or match is None:
        raise SystemExit(f"the reader's error no longer lists the sink types; got: {message}")
    for sink_type in re.split(r", | or ", match.group(1)):
        probe = f'[[sinks]]\ntype = "{sink_type}"\n{PROBE_KEY} = 1\n'
        tables[f'[[sinks]] type = "{sink_type}"'] = known_keys(parser, probe, tmp)
    return tables, sections


ROW = re.compile(r"^\s*\|\s*`([^`]+)`\s*\|")


def documented_keys(text):
    """First cells `key` of the rows of tables whose header has a Default column: the page's
    key tables, not tables of values or examples."""
    keys = set()
    in_key_table = False
    previous = ""
    for line in text.split("\n"):
        if not line.lstrip().startswith("|"):
            in_key_table = False
        elif re.match(r"^\s*\|[\s:|-]+\|?\s*$", line):  # the separator: the line before is the header
            in_key_table = "default" in previous.lower()
        elif in_key_table and (match := ROW.match(line)):
            keys.add(match.group(1).strip())
        previous = line
    return keys


def check_reference(args):
    page = "docs/configuration.md"
    if not os.path.exists(os.path.join(args.root, page)):
        print(f"SKIP: {page} does not exist yet; once it does, it must document every key the reader knows")
        return 77
    text = read(args.root, page)
    with tempfile.TemporaryDirectory(prefix="fieldlog-doc-keys-") as tmp:
        tables, sections = parser_tables(args.parser, tmp)
    documented = documented_keys(text)
    problems = []
    for table, keys in tables.items():
        for key in keys:
            if key in sections:
                # A table is documented by its section, not a row.
                if not re.search(rf"\[\[?{re.escape(key)}[\].]", text):
                    problems.append(f"{page}: the reader knows [{key}] ({table}), the page never mentions it")
            elif key not in documented:
                problems.append(f"{page}: no row \"| `{key}` |\" for {table}: the reader knows this key")
    every_key = {key for keys in tables.values() for key in keys}
    for key in sorted(documented - every_key):
        if key in ENVIRONMENT or re.fullmatch(r"[A-Z][A-Z0-9_]*", key):
            continue  # environment variables, checked below
        problems.append(f"{page}: documents `{key}`, which the reader does not know")
    for name in ENVIRONMENT:
        if name not in text:
            problems.append(f"{page}: never mentions the environment variable {name}")
    for table, keys in tables.items():
        print(f"reader's keys, {table}: {' '.join(keys)}")
    for problem in problems:
        print(f"FAIL {problem}")
    if problems:
        print("(a key counts as documented in a row \"| `key` | ...\" of a table whose header has a Default column)")
    print(f"{len(documented)} documented keys, {len(problems)} problems")
    return 1 if problems else 0


# A full RFC 3339 date-time (section 5.6): date, time, optional fraction, zone.
RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))$")
SHORT_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}\.\d{3} ")


def full_rfc3339(ts):
    """Whether `ts` is a whole RFC 3339 timestamp that names a real instant."""
    match = RFC3339.match(ts) if isinstance(ts, str) else None
    if not match:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        # A leap second (60) is RFC 3339's; datetime has none.
        datetime.datetime(year, month, day, hour, minute, min(second, 59))
        if match.group(7):
            datetime.timezone(datetime.timedelta(hours=int(match.group(8)), minutes=int(match.group(9))))
    except ValueError:
        return False
    return True


def check_getting_started(args):
    page = "docs/getting-started.md"
    found = blocks(read(args.root, page), "toml")
    if not found:
        print(f"FAIL {page}: no ```toml block")
        return 1
    fence_line, _, body = found[0]
    problems = []
    with tempfile.TemporaryDirectory(prefix="fieldlog-doc-run-") as tmp:
        with open(os.path.join(tmp, "fieldlog.toml"), "w", encoding="utf-8") as f:
            f.write(body)
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("FIELDLOG_", "OTEL_"))}
        environment["FIELDLOG_CONFIG"] = "fieldlog.toml"
        done = subprocess.run([args.runner], cwd=tmp, env=environment, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            problems.append(f"the program failed ({done.returncode}): {done.stderr.strip()}")
        terminal = done.stdout.splitlines()
        if len(terminal) != 1 or not SHORT_TIME.match(terminal[0]):
            problems.append(f"the terminal should get one line starting with the short time, got {terminal!r}")
        written = []
        for directory, _, names in os.walk(tmp):
            written += [os.path.join(directory, n) for n in names if n != "fieldlog.toml"]
        if len(written) != 1:
            problems.append(f"expected one log file, found {sorted(os.path.relpath(w, tmp) for w in written)}")
        for path in written:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
            if not lines:
                problems.append(f"{os.path.relpath(path, tmp)} is empty")
            for line in lines:
                ts = json.loads(line).get("ts")
                if not full_rfc3339(ts):
                    problems.append(f"{os.path.relpath(path, tmp)}: ts {ts!r} is not a full RFC 3339 timestamp")
    for problem in problems:
        print(f"FAIL {page}:{fence_line}: {problem}")
    if not problems:
        print(f"ok   {page}:{fence_line}: the terminal's time is short, the file's ts full RFC 3339")
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=["cpp", "toml", "reference", "getting-started"])
    parser.add_argument("--root", required=True, help="the repository: README.md and docs/")
    parser.add_argument("--compiler", help="cpp: the C++ compiler")
    parser.add_argument("--flags", help="cpp: a file of -I and -D flags, one a line")
    parser.add_argument("--parser", help="toml, reference: the fieldlog_doc_toml helper")
    parser.add_argument("--runner", help="getting-started: the fieldlog_doc_run helper")
    args = parser.parse_args()
    if args.check == "getting-started":
        if not args.runner:
            parser.error("getting-started needs --runner")
        args.runner = os.path.abspath(args.runner)  # it runs in a temporary directory
        return check_getting_started(args)
    if args.check == "cpp" and not (args.compiler and args.flags):
        parser.error("cpp needs --compiler and --flags")
    if args.check != "cpp" and not args.parser:
        parser.error(f"{args.check} needs --parser")
    if args.parser:
        args.parser = os.path.abspath(args.parser)  # it runs in a temporary directory
    return {"cpp": check_cpp, "toml": check_toml, "reference": check_reference}[args.check](args)


if __name__ == "__main__":
    sys.exit(main())
