#!/usr/bin/env python3
"""Check that a PTX image calls no function it leaves undefined, except those the CUDA
driver provides (device malloc, free and vprintf). Anything else is refused when the image
is loaded ("ptxas fatal: Unresolved extern function"), which only a GPU would show: a
kernel that reaches for a function devrt keeps to itself, for instance.

    check_externs.py IMAGE.ptx|DIRECTORY...   (a directory: every .ptx in it)

Exits 1 and names each unresolved symbol, 0 if there is none.
"""
import os
import re
import sys

PROVIDED_BY_CUDA = {"malloc", "free", "vprintf"}
# `.extern .func (.param .b64 func_retval0) name` or `.extern .global .align 8 .b64 name`
EXTERN = re.compile(r"^\s*\.extern\s+(\.func|\.global|\.shared|\.const)\b(.*)$", re.M)
NAME = re.compile(r"([A-Za-z_$%][\w$]*)\s*(?:\[.*)?;?\s*$")


def unresolved(text):
    for kind, rest in EXTERN.findall(text):
        rest = re.sub(r"\([^)]*\)", " ", rest)  # a function's return parameter
        match = NAME.search(rest)
        name = match.group(1) if match else rest.strip()
        if kind != ".func" or name not in PROVIDED_BY_CUDA:
            yield f"{kind} {name}"


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    images = []
    for path in paths:
        if os.path.isdir(path):
            images += sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".ptx"))
        else:
            images.append(path)
    if not images:
        print(f"no .ptx in {' '.join(paths)}", file=sys.stderr)
        return 2
    bad = 0
    for path in images:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            print(f"{path}: cannot read: {e.strerror}", file=sys.stderr)
            return 2
        if ".version" not in text or ".target" not in text:
            print(f"{path}: not PTX (no .version and .target)", file=sys.stderr)
            return 2
        for symbol in unresolved(text):
            print(f"{path}: unresolved extern {symbol}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
