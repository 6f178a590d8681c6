#!/usr/bin/env python3
"""Checks that libdevrt.so exports exactly the functions of the installed host headers.

The library's exports are nm's list of its defined dynamic symbols; the headers' functions
are public_names.py's host functions (clang's syntax tree of host.h, attach.h, cuda.h and
hip.h: the functions that programs call in libdevrt.so). The other installed headers declare
device code's functions (devrt.h, symbols.def: the device library's, in bitcode) and the
host stubs' (host_stubs.h: libdevrt_host.a's), which the library must not export; a function
of theirs in the library is reported as not declared. Both directions are reported: an
export that no host header declares (an internal function leaked), and a declared function
that the library does not export. Every export must also carry a version node of the version
script (--map).

--plant NAME adds NAME to the library's exports as if it exported it, --drop NAME takes it
away: the controls, each of which must fail naming NAME. Exit status: 0 the exports are the
headers' functions, 1 they are not (listed), 2 usage, or a tool failed.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from public_names import HOST_LIBRARY, public_names  # noqa: E402


def version_nodes(path):
    """The nodes a version script defines ("DEVRT_1.0 { ... };")."""
    text = re.sub(r"/\*.*?\*/", "", open(path, encoding="utf-8").read(), flags=re.S)
    return set(re.findall(r"^\s*([A-Za-z_][\w.]*)\s*\{", text, flags=re.M))


def exports(nm, library):
    """{name: version} of the library's defined dynamic symbols; version "" when none."""
    result = subprocess.run([nm, "-D", "--defined-only", "--with-symbol-versions", library],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check_exports: {nm} failed on {library}:\n{result.stderr}")
    found = {}
    for line in result.stdout.splitlines():
        fields = line.split()
        if len(fields) != 3:
            continue
        kind, symbol = fields[1], fields[2]
        name, _, version = symbol.partition("@")
        if kind == "A" and not version:
            continue  # a version node's own symbol
        found[name] = version
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", required=True)
    parser.add_argument("--include", required=True, help="the directory that holds devrt/")
    parser.add_argument("--map", required=True, help="the library's version script")
    parser.add_argument("--clang", default="clang", help="clang, whose -ast-dump=json is read")
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--plant", action="append", default=[],
                        help="count NAME as exported (control)")
    parser.add_argument("--drop", action="append", default=[],
                        help="count NAME as not exported (control)")
    args = parser.parse_args()
    if not os.path.isfile(args.library):
        print(f"check_exports: {args.library}: no such file", file=sys.stderr)
        return 2
    nodes = version_nodes(args.map)
    if not nodes:
        print(f"check_exports: {args.map}: no version node", file=sys.stderr)
        return 2
    node = sorted(nodes)[0]
    exported = exports(args.nm, args.library)
    exported.update({name: "@" + node for name in args.plant})
    for name in args.drop:
        exported.pop(name, None)
    declared = {name: header for kind, name, header in
                public_names(args.clang, args.include, "host-functions")}
    if not declared:
        print(f"check_exports: no host functions in {args.include}/devrt", file=sys.stderr)
        return 2

    library = os.path.basename(args.library)
    problems = []
    for name in sorted(set(exported) - set(declared)):
        problems.append(f"{library} exports {name}, which no installed host header declares"
                        " (an internal function leaked)")
    for name in sorted(set(declared) - set(exported)):
        problems.append(f"{library} does not export {name}, which devrt/{declared[name]}"
                        " declares")
    for name in sorted(set(exported) & set(declared)):
        version = exported[name]
        # "@@NODE": the default version, which programs link against
        if not version.startswith("@") or version[1:] not in nodes:
            how = f"as {name}@{version}" if version else "unversioned"
            problems.append(f"{library} exports {name} {how}, not as the default version of a"
                            f" node of {os.path.basename(args.map)} ({', '.join(sorted(nodes))})")
    for line in problems:
        print(line)
    if problems:
        print(f"{library}: the exports differ from the functions of"
              f" {', '.join(sorted(HOST_LIBRARY))} ({len(problems)} above)")
        return 1
    print(f"{library}: exports exactly the {len(declared)} functions of"
          f" {', '.join(sorted(HOST_LIBRARY))}, each under {', '.join(sorted(nodes))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
