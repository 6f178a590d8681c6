#!/usr/bin/env python3
"""The backend seam's two rules, over the source tree.

kinds (the default): no file outside host/backends/ names a backend kind, except the public
header. The seam's promise (docs/design.md, "Backends"): the runtime, the tools and the
tests' harness ask the registry (host/backends/registry.c) or a backend's ops, never which
backend it is.

includes: no file under host/backends/ includes runtime.h. Backends include backend.h and
reach devices and modules through its accessors (docs/design.md, "The backend seam"), so the
runtime's internals can change without them.

Exit 0 when the rule holds, 1 naming each file and line that breaks it.
"""
import argparse
import pathlib
import re
import sys

KIND = re.compile(r"\bDEVRT_BACKEND_(HSA|EMU|CUDA|HIP)\b")
# Where the seam must hold, and the files that declare the kinds.
SCANNED = ("host", "tests/common", "include/devrt")
ALLOWED = ("host/backends/", "include/devrt/host.h")
# An include of runtime.h, by whatever path.
RUNTIME_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?:[^">]*/)?runtime\.h[">]')
BACKENDS = "host/backends/"


def sources(root, top):
    return [p for p in sorted((root / top).rglob("*")) if p.suffix in (".c", ".h") and p.is_file()]


def named(path, root):
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def check_kinds(root, also):
    files = [p for top in SCANNED for p in sources(root, top)] + also
    found = 0
    for path in files:
        name = named(path, root)
        if name.startswith(ALLOWED) and path not in also:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = KIND.search(line)
            if match:
                print(f"backend_kinds: {name}:{number} names {match.group(0)}")
                found += 1
    if found:
        print(f"backend_kinds: {found} line(s) outside host/backends/ name a backend kind; "
              "ask the registry (backend.h) instead")
        return 1
    print(f"backend_kinds: {len(files)} files, none names a backend kind outside host/backends/")
    return 0


def check_includes(root, also):
    files = sources(root, BACKENDS) + also
    found = 0
    for path in files:
        name = named(path, root)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if RUNTIME_INCLUDE.match(line):
                print(f"backend_includes: {name}:{number} includes runtime.h")
                found += 1
    if found:
        print(f"backend_includes: {found} line(s) under host/backends/ include runtime.h; "
              "include backend.h and use its accessors instead")
        return 1
    print(f"backend_includes: {len(files)} files under host/backends/, none includes runtime.h")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the project's source tree")
    parser.add_argument("--rule", choices=("kinds", "includes"), default="kinds",
                        help="which rule to check (kinds: the default)")
    parser.add_argument("--also", action="append", default=[],
                        help="another file to scan as if it lay in host/ (kinds) or in "
                             "host/backends/ (includes): the controls")
    options = parser.parse_args()
    root = pathlib.Path(options.root)
    also = [pathlib.Path(p) for p in options.also]
    if options.rule == "includes":
        return check_includes(root, also)
    return check_kinds(root, also)


if __name__ == "__main__":
    sys.exit(main())
