#!/usr/bin/env python3
"""No file outside host/backends/ names a backend kind, except the public header.

The seam's promise (docs/design.md, "Backends"): the runtime, the tools and the tests' harness
ask the registry (host/backends/registry.c) or a backend's ops, never which backend it is.
Exit 0 when that holds, 1 naming each file and line that names a kind.
"""
import argparse
import pathlib
import re
import sys

KIND = re.compile(r"\bDEVRT_BACKEND_(HSA|EMU|CUDA|HIP)\b")
# Where the seam must hold, and the files that declare the kinds.
SCANNED = ("host", "tests/common", "include/devrt")
ALLOWED = ("host/backends/", "include/devrt/host.h")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the project's source tree")
    parser.add_argument("--also", action="append", default=[],
                        help="another file to scan as if it lay in host/ (the control)")
    options = parser.parse_args()
    root = pathlib.Path(options.root)
    files = [p for top in SCANNED for p in sorted((root / top).rglob("*"))
             if p.suffix in (".c", ".h") and p.is_file()]
    files += [pathlib.Path(p) for p in options.also]
    found = 0
    for path in files:
        try:
            name = path.relative_to(root).as_posix()
        except ValueError:
            name = path.as_posix()
        if name.startswith(ALLOWED) and path not in [pathlib.Path(p) for p in options.also]:
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


if __name__ == "__main__":
    sys.exit(main())
