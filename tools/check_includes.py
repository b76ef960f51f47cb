#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The include graph runs with the flow of one record. Scans the #include lines of every .hpp and
.cpp under src/, sinks/ and include/, maps each file and each included file to its layer, and
exits 1 with one line per include against the flow (and per cycle between layers); else prints
one OK line. Stdlib only. Usage: check_includes.py [ROOT] (default: this script's repository).

Layers, in the order they use each other: public (include/fieldlog/) → dispatch → record →
sinks → encode. dispatch is the record path (Logger::emit past the level check, the routing, the async
writer): it takes the record (record: its context, its owned copy, the thread's state), has it
encoded once per line format (encode) and hands it to the sinks; a sink with an encoder of its
own (journald's entry, OTLP's LogRecord) keeps it in its folder and writes with encode's value
and text writers. Nothing on the path calls back up into an earlier layer.
 - An include goes downstream only: from a layer to itself or a later one.
 - base (src/base/, shared primitives such as the byte buffer) lies below every layer: any
   layer may include it; it includes only base and public headers.
 - public headers may be included by everything and include only public headers.
 - control (src/control/, the cold path) may include everything; nothing else includes it.
"""
import os
import re
import sys

FLOW = ["dispatch", "record", "sinks", "encode"]
SCANNED = ["src", "sinks", "include"]
INCLUDE_DIRS = ["src", "include", "."]  # the library's include path (CMakeLists.txt)
EXTENSIONS = (".hpp", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')


def layer_of(relpath):
    """The layer of a file given by its path relative to the root, or None outside them all."""
    parts = relpath.split("/")
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "fieldlog":
        return "public"
    if parts[0] == "sinks" and len(parts) > 1:
        return "sinks"
    if parts[0] == "src" and len(parts) > 2 and parts[1] in FLOW + ["base", "control"]:
        return parts[1]
    return None


def allowed(source, target):
    """May a file of layer `source` include one of layer `target`?"""
    if source == "control":
        return True
    if target == "control":
        return False
    if source == "public":
        return target == "public"
    if source == "base":
        return target in ("base", "public")
    if target in ("public", "base"):
        return True
    return FLOW.index(target) >= FLOW.index(source)


def resolve(root, relpath, name, quoted):
    """The included file's path relative to the root: a quoted name is looked up beside the
    including file first, as the compiler does; then (either form) in the include dirs. None
    when it is not in the tree (a system or third-party header)."""
    candidates = []
    if quoted:
        candidates.append(os.path.join(os.path.dirname(relpath), name))
    candidates += [os.path.join(d, name) for d in INCLUDE_DIRS]
    for candidate in candidates:
        candidate = os.path.normpath(candidate)
        if not candidate.startswith("..") and os.path.isfile(os.path.join(root, candidate)):
            return candidate.replace(os.sep, "/")
    return None


def sources(root):
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


RANK = {"public": 0, "base": 1, "dispatch": 2, "record": 3, "sinks": 4, "encode": 5, "control": 6}


def layer_cycles(edges):
    """Every strongly connected set of more than one layer in the layer graph (Tarjan), each in
    the flow order."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component, key=RANK.get))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def without_block_comments(text):
    """`text` with every /* ... */ blanked (its newlines kept, so line numbers stay)."""
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def check(root):
    """Returns (violation lines, number of files, number of includes of the tree's files)."""
    violations, files, includes = [], 0, 0
    edges = {}  # layer → {layer it includes (other than itself) → the first file:line doing so}
    for relpath in sources(root):
        files += 1
        source = layer_of(relpath)
        if source is None:
            violations.append(f"{relpath}:1: in no layer (src/<layer>/, sinks/ or include/fieldlog/)")
            continue
        with open(os.path.join(root, relpath), encoding="utf-8", errors="replace") as f:
            lines = without_block_comments(f.read()).splitlines()
        for number, line in enumerate(lines, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            name = match.group(1) or match.group(2)
            quoted = match.group(1) is not None
            target_path = resolve(root, relpath, name, quoted)
            if target_path is None:
                if quoted:
                    violations.append(f"{relpath}:{number}: {source} includes {name} (unknown): not in the tree")
                continue  # <...> outside the tree: the standard library, fmt, date, toml++
            includes += 1
            target = layer_of(target_path)
            if target is None:
                violations.append(f"{relpath}:{number}: {source} includes {name} (no layer): not a layer's file")
                continue
            if target != source:
                edges.setdefault(source, {}).setdefault(target, f"{relpath}:{number}")
            if not allowed(source, target):
                violations.append(f"{relpath}:{number}: {source} includes {name} ({target}): against the flow")
    for cycle in layer_cycles(edges):
        sites = [f"{a} -> {b} at {edges[a][b]}" for a in cycle for b in cycle if b in edges.get(a, {})]
        # Reported at the first include of the cycle that goes against the flow, else (two layers
        # the rules let include each other) at its first include.
        within = [(a, b) for a in cycle for b in cycle if b in edges.get(a, {})]
        back = next((edges[a][b] for a, b in within if not allowed(a, b)), edges[within[0][0]][within[0][1]])
        violations.append(f"{back}: include cycle between layers {', '.join(cycle)}: {'; '.join(sites)}")
    return violations, files, includes


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not all(os.path.isdir(os.path.join(root, top)) for top in ("src", "include")):
        print(f"check_includes: {root} has no src/ and include/", file=sys.stderr)
        return 2
    violations, files, includes = check(root)
    for line in violations:
        print(line)
    if violations:
        print(f"check_includes: FAILED, {len(violations)} violation(s) of the flow "
              "(public → dispatch → record → sinks → encode; base below all; control above all)")
        return 1
    print(f"check_includes: OK, {includes} includes in {files} files run with the flow "
          "(public → dispatch → record → sinks → encode; base below all; control above all)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
