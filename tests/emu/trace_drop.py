#!/usr/bin/env python3
"""Run COMMAND, which writes a trace to FILE.full, then write FILE without the events named
NAME (its count of written records lowered to match): what trace_check.py's controls read,
a real trace less the events a check looks for.

    trace_drop.py --trace FILE --drop NAME -- COMMAND [ARG]...

Exits with COMMAND's status, or 1 when COMMAND wrote no FILE.full.
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trace", required=True)
    parser.add_argument("--drop", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    full = args.trace + ".full"
    if os.path.exists(full):
        os.remove(full)  # an earlier run's file would pass for this one's
    status = subprocess.run(command).returncode
    try:
        with open(full) as f:
            trace = json.load(f)
    except OSError as error:
        print(f"trace_drop.py: {error}", file=sys.stderr)
        return 1
    kept = [e for e in trace["traceEvents"] if e.get("name") != args.drop]
    # Still a well-formed trace: what it says it wrote is what it holds.
    trace.setdefault("otherData", {})["written"] = sum(e.get("ph") != "M" for e in kept)
    trace["traceEvents"] = kept
    with open(args.trace, "w") as f:
        json.dump(trace, f)
    return status


if __name__ == "__main__":
    sys.exit(main())
