#!/usr/bin/env python3
"""Runs a document's commands as a user types them, against an installed prefix.

Takes the ```sh blocks of a Markdown file (README.md, docs/*.md) after a heading
("## Installing" unless --from names another), but for the first --skip of them (1: that
section's own block, which builds and installs, as the package tests have done already),
runs them in one bash session in a scratch directory holding a copy of examples/, with PREFIX and PATH pointing at the
prefix, and compares each command's exit status with the expected list. A ```c block
under a line of its file's name in bold code (**`scale.c`**) is written to that file in the
scratch directory first, as a user saves it. Exit status: 0 as
expected, 1 not (each command, its status and its output shown), 2 usage.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def commands(doc, heading, skip):
    text = open(doc, encoding="utf-8").read()
    start = text.index(heading)
    blocks = re.findall(r"```sh\n(.*?)```", text[start:], re.S)[skip:]
    # A line ending in a backslash goes on in the next, as in the shell.
    lines = [line for block in blocks for line in block.replace("\\\n", "").splitlines()]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def files(doc, heading):
    """{name: text} of the ```c blocks after HEADING that a **`name`** line heads."""
    text = open(doc, encoding="utf-8").read()
    found = re.findall(r"^\*\*`([\w.-]+)`\*\*\n\n?```c\n(.*?)```", text[text.index(heading):],
                       re.S | re.M)
    return dict(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", required=True, help="the Markdown file")
    parser.add_argument("--source", required=True, help="the source tree (for examples/)")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--from", dest="heading", default="## Installing",
                        help="the heading whose section and those after it hold the commands")
    parser.add_argument("--skip", type=int, default=1,
                        help="blocks to leave out first (1: Installing's own, which builds)")
    parser.add_argument("--expect", required=True,
                        help="comma-separated exit statuses, one per command; 1/2 accepts either")
    args = parser.parse_args()
    lines = commands(args.doc, args.heading, args.skip)
    expected = [{int(s) for s in x.split("/")} for x in args.expect.split(",")]

    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(os.path.join(args.source, "examples"),
                    os.path.join(args.work, "examples"))
    for name, body in files(args.doc, args.heading).items():
        with open(os.path.join(args.work, name), "w", encoding="utf-8") as out:
            out.write(body)
    script = "".join(f"{line}\necho \"@@status $?\"\n" for line in lines)
    env = dict(os.environ, PREFIX=args.prefix,
               PATH=f"{args.prefix}/bin:{os.environ['PATH']}")
    out = subprocess.run(["bash", "-c", script], cwd=args.work, env=env,
                         capture_output=True, text=True).stdout
    statuses = [int(s) for s in re.findall(r"^@@status (\d+)$", out, re.M)]
    outputs = re.split(r"^@@status \d+\n", out, flags=re.M)
    ok = len(lines) == len(expected) == len(statuses)
    for i, line in enumerate(lines):
        got = statuses[i] if i < len(statuses) else None
        want = expected[i] if i < len(expected) else None
        good = want is not None and got in want
        ok = ok and good
        shown = "/".join(str(w) for w in sorted(want)) if want else None
        print(f"{'ok  ' if good else 'FAIL'} exit {got} (expected {shown}): {line}")
        if not good and i < len(outputs):
            print(outputs[i])
    if len(lines) != len(expected):
        print(f"{args.doc}: {len(lines)} commands, but {len(expected)} expected statuses")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
