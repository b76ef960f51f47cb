#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""doc_snippets.py must fail when the manual is wrong, naming the page and line: it runs each
check on synthetic pages in a temporary root (a block that does not compile, a key the reader
does not know, a reference page missing a key or adding one, a getting-started configuration
whose file gets the short time) and on their correct versions.
Usage: doc_snippets_test.py DRIVER --compiler CXX --flags FILE --parser HELPER --runner HELPER
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

failures = []


def expect(name, done, code, *needles):
    output = done.stdout + done.stderr
    missing = [n for n in needles if n not in output]
    if done.returncode != code or missing:
        failures.append(f"{name}: exit {done.returncode} (want {code}), missing {missing}\n{output}")
    else:
        print(f"ok   {name}")


def write(root, page, text):
    os.makedirs(os.path.dirname(os.path.join(root, page)), exist_ok=True)
    with open(os.path.join(root, page), "w", encoding="utf-8") as f:
        f.write(text)


GOOD_CPP = "```cpp\n#include <fieldlog/fieldlog.hpp>\nvoid f() { fieldlog::get(\"app\").info(\"hi\"); }\n```\n"
# In a list, indented: line 5 of the page opens it, line 7 is the error.
BROKEN_CPP = "\n1. A step:\n\n   ```cpp\n   #include <fieldlog/fieldlog.hpp>\n   void f() { undeclared(); }\n   ```\n"
GOOD_TOML = ('```toml\nlevel = "debug"\n[[sinks]]\ntype = "file"\npath = "/nonexistent-dir/app.log"\n'
             '[[sinks]]\ntype = "syslog"\naddress = "logs:6514"\ntransport = "tls"\nca_file = "/nonexistent-dir/ca.pem"\n```\n')
BAD_TOML = '\n```toml\nlevel = "debug"\nlevle_typo = 1\n```\n'
GETTING_STARTED = ('```toml\nformat = "console"\n{top}[[sinks]]\ntype = "stdout"\n{sink}'
                   '[[sinks]]\ntype = "file"\nformat = "json"\npath = "logs/app.log"\n```\n')


def main():
    cli = argparse.ArgumentParser()
    cli.add_argument("driver")
    cli.add_argument("--compiler", required=True)
    cli.add_argument("--flags", required=True)
    cli.add_argument("--parser", required=True)
    cli.add_argument("--runner", required=True)
    args = cli.parse_args()
    spec = importlib.util.spec_from_file_location("doc_snippets", args.driver)
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)

    def run(check, root):
        extra = {"cpp": ["--compiler", args.compiler, "--flags", args.flags],
                 "getting-started": ["--runner", args.runner]}.get(check, ["--parser", args.parser])
        return subprocess.run([sys.executable, args.driver, check, "--root", root, *extra],
                              capture_output=True, text=True)

    with tempfile.TemporaryDirectory(prefix="fieldlog-doc-test-") as root:
        write(root, "README.md", GOOD_CPP + GOOD_TOML)
        expect("cpp: a whole file compiles", run("cpp", root), 0, "ok   README.md:1")
        expect("toml: paths this machine cannot write or read still parse", run("toml", root), 0, "ok   README.md:5")
        write(root, "docs/guide.md", BROKEN_CPP + BAD_TOML)
        expect("cpp: a block that does not compile fails", run("cpp", root), 1,
               "FAIL docs/guide.md:4", "docs/guide.md:6")
        expect("toml: an unknown key fails", run("toml", root), 1, "FAIL docs/guide.md:9", "docs/guide.md:11: levle_typo")

        expect("reference: skipped while the page is missing", run("reference", root), 77, "SKIP")
        with tempfile.TemporaryDirectory() as tmp:
            tables, sections = driver.parser_tables(args.parser, tmp)
        rows = []
        for table, keys in tables.items():
            rows.append(f"\n## {table}\n\n| Key | Type | Default | Example |\n|---|---|---|---|\n")
            rows += [f"| `{k}` | x | x | x |\n" if k not in sections else f"\n[{k}] is a table.\n\n| Key | Default |\n|-|-|\n"
                     for k in keys]
        env = "".join(f"| `{name}` | x |\n" for name in driver.ENVIRONMENT)
        values = "\n| Value | Meaning |\n|---|---|\n| `daily` | once a day |\n"  # not a key table
        full = "".join(rows) + "\n| Variable | Default |\n|---|---|\n" + env + values
        write(root, "docs/configuration.md", full)
        expect("reference: every key documented passes", run("reference", root), 0, "0 problems")
        write(root, "docs/configuration.md", full.replace("| `compression_level` |", "| compression level |"))
        expect("reference: a missing key fails", run("reference", root), 1, "no row \"| `compression_level` |\"")
        write(root, "docs/configuration.md", full + "\n| Key | Default |\n|---|---|\n| `made_up` | x |\n")
        expect("reference: a key the reader does not know fails", run("reference", root), 1,
               "documents `made_up`, which the reader does not know")
        write(root, "docs/configuration.md", full.replace("OTEL_SERVICE_NAME", "SERVICE"))
        expect("reference: a missing environment variable fails", run("reference", root), 1, "OTEL_SERVICE_NAME")
        write(root, "docs/configuration.md", full.replace("[async]", "async"))
        expect("reference: a missing table section fails", run("reference", root), 1, "[async]")

        write(root, "docs/getting-started.md", GETTING_STARTED.format(top='timestamp = "short"\n', sink=""))
        expect("getting-started: a short ts in the file fails", run("getting-started", root), 1,
               "FAIL docs/getting-started.md:1", "is not a full RFC 3339 timestamp")
        write(root, "docs/getting-started.md", GETTING_STARTED.format(top="", sink='timestamp = "short"\n'))
        expect("getting-started: short on the terminal only passes", run("getting-started", root), 0,
               "ok   docs/getting-started.md:1")

    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
