#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The console format on a real terminal: tmux's screen, escape sequences included.

Runs the console demo (console_demo.cpp: fixed clock, colour `auto`) as the only program of a
detached tmux session of a fixed size, on a server of its own (its own socket, no
configuration file: `-f /dev/null`), waits for it to signal that it ended (`tmux wait-for`),
captures the pane with its colours (`capture-pane -e -p`) and compares that with the golden
screen. The colour variables of the caller's environment are removed, so `auto` sees only the
terminal.

usage: tmux_test.py CONSOLE_DEMO GOLDEN [--update]    exit 0 pass, 1 fail, 77 skipped
"""
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

COLUMNS, ROWS = 160, 16


def main():
    demo, golden = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    tmux = shutil.which("tmux")
    if tmux is None:
        print("SKIP: tmux is not installed (apt-get install tmux)")
        return 77
    env = {key: value for key, value in os.environ.items()
           if key not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TMUX", "TMUX_PANE")}
    env.update(TERM="xterm-256color", LC_ALL="C.UTF-8")
    with tempfile.TemporaryDirectory(prefix="fieldlog-tmux-") as directory:
        socket = os.path.join(directory, "tmux.sock")
        base = [tmux, "-u", "-f", "/dev/null", "-S", socket]

        def run(*args):
            return subprocess.run(base + list(args), env=env, check=True, capture_output=True, text=True,
                                  timeout=30).stdout

        # The pane stays open after the demo (cat reads the terminal) until the server is killed.
        command = f"{demo}; {tmux} -S {socket} wait-for -S demo-done; exec cat"
        run("new-session", "-d", "-x", str(COLUMNS), "-y", str(ROWS), command)
        try:
            run("wait-for", "demo-done")
            screen = run("capture-pane", "-e", "-p", "-J")
        finally:
            subprocess.run(base + ["kill-server"], env=env, capture_output=True, timeout=30)
    screen = screen.rstrip("\n") + "\n"
    if update:
        with open(golden, "w", encoding="utf-8") as out:
            out.write(screen)
        print(f"wrote {golden}")
        return 0
    with open(golden, encoding="utf-8") as expected_file:
        expected = expected_file.read()
    if screen != expected:
        print("FAIL: the screen differs from the golden one (escapes shown as \\x1b):")
        shown = lambda text: [line.replace("\x1b", "\\x1b") for line in text.splitlines()]
        print("\n".join(difflib.unified_diff(shown(expected), shown(screen), "golden", "screen", lineterm="")))
        return 1
    print(f"ok: {len(screen.splitlines())} lines as in the golden screen")
    return 0


if __name__ == "__main__":
    sys.exit(main())
