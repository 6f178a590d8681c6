#!/usr/bin/env python3
"""Checks that docs/api.md names every public name of the installed headers.

A name counts where it stands in a code span (`...`) of a section ("## ..." up to the next
one) whose heading names the name's header (host.h, symbols.def, ...); public_names.py says
which names are public and where each is declared. Every installed header must be named
somewhere on the page too. --without NAME first deletes NAME everywhere in the page, the
control: the check must then fail on it. Exit status: 0 every name there, 1 some missing
(listed), 2 usage.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from public_names import public_names  # noqa: E402


def sections(text):
    """(heading, identifiers in its code spans) for each "## " section."""
    parts = re.split(r"^## (.*)$", text, flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2]):
        spans = re.findall(r"`([^`\n]+)`", body) + re.findall(r"`([^`\n]+)`", heading)
        yield heading, {word for span in spans for word in re.findall(r"[A-Za-z_]\w*", span)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", required=True)
    parser.add_argument("--include", required=True, help="the directory that holds devrt/")
    parser.add_argument("--clang", default="clang")
    parser.add_argument("--without", help="delete this name from the page first (control)")
    args = parser.parse_args()
    text = open(args.doc, encoding="utf-8").read()
    if args.without:
        text = re.sub(rf"\b{re.escape(args.without)}\b", "", text)
    found = list(sections(text))
    missing = []
    for kind, name, header in public_names(args.clang, args.include):
        word = name.split()[-1]  # "struct devrt_arg" is named as devrt_arg
        if not any(header in heading and word in words for heading, words in found):
            missing.append(f"{kind} {name} ({header})")
    for header in sorted(os.listdir(os.path.join(args.include, "devrt"))):
        if header not in text:
            missing.append(f"header {header}")
    for line in missing:
        print(f"{args.doc}: missing {line}")
    if missing:
        print(f"{args.doc}: {len(missing)} public names are not in their header's section")
        return 1
    print(f"{args.doc}: every public name of {args.include}/devrt is there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
