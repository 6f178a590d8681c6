#!/usr/bin/env python3
"""Run a command and check its exact exit status and its output. CTest alone cannot: with
PASS_REGULAR_EXPRESSION it ignores the status, with WILL_FAIL any failure (a crash too)
passes.

    expect.py --status N [--output REGEX] [--env VAR=VALUE]... [--skip-if-exists PATH]
              -- COMMAND [ARG]...

Exits 0 when COMMAND exits with status N and its output (stdout, then stderr) matches
REGEX (re.search), 1 otherwise, saying what differed; 77 (CTest's skip) without running
COMMAND when PATH exists.
"""
import argparse
import os
import re
import signal
import subprocess
import sys

SKIP = 77


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--status", type=int, required=True)
    parser.add_argument("--output", default=None, metavar="REGEX")
    parser.add_argument("--env", action="append", default=[], metavar="VAR=VALUE")
    parser.add_argument("--skip-if-exists", default=None, metavar="PATH")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    if args.skip_if_exists and os.path.exists(args.skip_if_exists):
        print(f"skipped: {args.skip_if_exists} exists")
        return SKIP
    env = dict(os.environ)
    for item in args.env:
        name, _, value = item.partition("=")
        env[name] = value
    p = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    output = p.stdout + p.stderr
    sys.stdout.write(output)
    failed = []
    if p.returncode < 0:
        failed.append(f"killed by {signal.Signals(-p.returncode).name}, expected exit {args.status}")
    elif p.returncode != args.status:
        failed.append(f"exited {p.returncode}, expected {args.status}")
    if args.output is not None and not re.search(args.output, output):
        failed.append(f"output does not match {args.output!r}")
    for what in failed:
        print(f"FAILED: {' '.join(command)}: {what}")
    if not failed:
        print(f"ok: exited {p.returncode}" + (f", output matches {args.output!r}" if args.output else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
