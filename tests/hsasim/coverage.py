#!/usr/bin/env python3
"""The line coverage of the HSA backend (hsa*.c) that the hsasim tests reached.

Usage: coverage.py --build DIR --min PERCENT
Reads the gcov data of every object compiled from those files under DIR (a build with
DEVRT_COVERAGE_HSA=ON: the static and the shared library each have theirs), merges the lines
run in any of them, and prints each file's figure and the whole. Exit codes: 0 at or above
PERCENT, 1 below it, 2 when there is no data (the tests did not run, or the build has no
coverage).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

FILES = ("hsa.c", "hsa_copy.c", "hsa_dispatch.c", "hsa_faults.c", "hsa_loader.c",
         "hsa_memory.c")


def lines_of(gcda):
    """{source file name: {line: count}} from gcov's JSON for one .gcda."""
    out = subprocess.run(["gcov", "--json-format", "--stdout", gcda], check=True,
                         capture_output=True, text=True, cwd=os.path.dirname(gcda)).stdout
    result = {}
    for chunk in out.splitlines():
        if not chunk.strip():
            continue
        for f in json.loads(chunk).get("files", []):
            name = os.path.basename(f["file"])
            if name in FILES:
                counts = result.setdefault(name, {})
                for line in f["lines"]:
                    n = line["line_number"]
                    counts[n] = counts.get(n, 0) + line["count"]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--min", type=float, required=True)
    args = parser.parse_args()
    merged = {}
    for gcda in glob.glob(os.path.join(os.path.abspath(args.build), "**", "*.gcda"), recursive=True):
        if os.path.basename(gcda)[:-len(".gcda")] not in FILES:
            continue
        for name, counts in lines_of(gcda).items():
            into = merged.setdefault(name, {})
            for n, c in counts.items():
                into[n] = into.get(n, 0) + c
    if not merged:
        print("coverage: no gcov data for hsa.c or hsa_memory.c under " + args.build)
        return 2
    total_run = total = 0
    for name in FILES:
        counts = merged.get(name, {})
        run = sum(1 for c in counts.values() if c)
        total_run += run
        total += len(counts)
        percent = 100.0 * run / len(counts) if counts else 0.0
        print(f"coverage: {name}: {run} of {len(counts)} lines ({percent:.1f} %)")
        missed = sorted(n for n, c in counts.items() if not c)
        if missed:
            print(f"coverage: {name}: lines not run: {', '.join(map(str, missed))}")
    percent = 100.0 * total_run / total
    print(f"coverage: the HSA backend: {total_run} of {total} lines ({percent:.1f} %), "
          f"at least {args.min:.0f} % wanted")
    return 0 if percent >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
