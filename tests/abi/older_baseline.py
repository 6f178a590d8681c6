#!/usr/bin/env python3
"""Writes a copy of an ABI baseline as an older release would have recorded it.

The controls of tests/abi: --drop-member STRUCT.MEMBER removes the struct's last member
and shrinks the struct to its offset (the baseline from before devrt_launch_config gained
timeout_ns), --soname NAME gives the record another SONAME (the baseline of the SOVERSION
before). Exit status: 0, 1 the struct or member is not in the baseline, 2 usage.
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline")
    parser.add_argument("out")
    parser.add_argument("--drop-member", metavar="STRUCT.MEMBER")
    parser.add_argument("--soname")
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
    tree.write(args.out, encoding="unicode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
