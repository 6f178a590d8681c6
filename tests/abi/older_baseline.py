#!/usr/bin/env python3
"""Writes a copy of an ABI baseline as an older release would have recorded it.

The controls of tests/abi: --drop-member STRUCT.MEMBER removes the struct's last member
and shrinks the struct to its offset (the baseline from before devrt_launch_config gained
timeout_ns), --soname NAME gives the record another SONAME (the baseline of the SOVERSION
before), --add-function NAME records one more function, a copy of the first one's type
under NAME (the baseline of a release that had a function the library has since lost).
Exit status: 0, 1 the struct or member is not in the baseline, 2 usage.
"""
import argparse
import copy
import sys
import xml.etree.ElementTree as ET


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline")
    parser.add_argument("out")
    parser.add_argument("--drop-member", metavar="STRUCT.MEMBER")
    parser.add_argument("--soname")
    parser.add_argument("--add-function", metavar="NAME")
    args = parser.parse_args()
    tree = ET.parse(args.baseline)
    root = tree.getroot()
    if args.soname:
        root.set("soname", args.soname)
    if args.drop_member:
        struct, member = args.drop_member.split(".")
        decls = [c for c in root.iter("class-decl")
                 if c.get("name") == struct and c.get("size-in-bits")]
        if not decls:
            print(f"older_baseline: no struct {struct} in {args.baseline}")
            return 1
        for decl in decls:
            members = decl.findall("data-member")
            last = members[-1] if members else None
            if last is None or last.find("var-decl").get("name") != member:
                print(f"older_baseline: {member} is not the last member of {struct}")
                return 1
            decl.remove(last)
            decl.set("size-in-bits", last.get("layout-offset-in-bits"))
    if args.add_function:
        symbols = root.find("elf-function-symbols")
        symbol = symbols.find("elf-symbol")
        decl = next(d for d in root.iter("function-decl") if d.get("elf-symbol-id"))
        parent = next(p for p in root.iter() if decl in list(p))
        new_symbol = copy.deepcopy(symbol)
        new_symbol.set("name", args.add_function)
        symbols.append(new_symbol)
        new_decl = copy.deepcopy(decl)
        for attribute in ("name", "mangled-name", "elf-symbol-id"):
            if new_decl.get(attribute):
                new_decl.set(attribute, args.add_function)
        parent.append(new_decl)
    tree.write(args.out, encoding="unicode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
