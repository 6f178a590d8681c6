#!/usr/bin/env python3
"""Checks that every backend registers the same device tests.

Reads CTest's list of tests (`ctest --show-only=json-v1`, from a build directory or a
file) and compares the names under each backend's prefix: emu.<group>.<test> must have
hardware.<group>.<test> and nvptx.<group>.<test> beside it, and the other way round. The
emulation's other wave widths count as backends of their own (emu64.<group>.<test>, the
same tests in 64-lane waves), so a test cannot run at one width and not the other.
Tests only the host can run are named unit.*, not emu.*. A test that only some backends
can run carries the label only-gpu (hardware and nvptx: a GPU fault, which on the
emulation would be the process's own), only-nvptx (the CUDA driver's own behaviour) or
only-kinds (which parameters are pointers, which PTX does not say) or only-trace (the
trace's tests, on the emulation and the doubles) or only-two-gpus (hsasim32, whose double
lists two GPU agents) or only-gfx90a (hsasim, for code objects that need ROCm's ockl, which
the installed device libraries build for gfx90a and not gfx1100), and is compared among
those backends alone. Exit codes: 0 the same, 1 they differ (each difference named), 2 the
list could not be read.
"""
import argparse
import json
import subprocess
import sys

BACKENDS = ("emu", "emu64", "hardware", "nvptx", "hsasim", "hsasim32", "hip",
            "hipfake")
# The backends that a test with one of these labels is registered for.
ONLY = {"only-gpu": ("hardware", "nvptx"), "only-nvptx": ("nvptx",),
        "only-hsasim": ("hsasim", "hsasim32"), "only-hipfake": ("hipfake",),
        "only-two-gpus": ("hsasim32",),
        "only-gfx90a": ("hsasim",),
        "only-kinds": tuple(b for b in BACKENDS if b != "nvptx"),
        # The trace's events against what devrt-run printed, where CI runs them; a GPU's
        # run of the same is not registered yet.
        "only-trace": ("emu", "hsasim", "hsasim32", "hipfake")}


def labels(test):
    for prop in test.get("properties", []):
        if prop.get("name") == "LABELS":
            return set(prop.get("value", []))
    return set()


def read_tests(args):
    if args.json:
        with open(args.json, encoding="utf-8") as f:
            return json.load(f)
    out = subprocess.run(
        [args.ctest, "--test-dir", args.build, "--show-only=json-v1"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--build", help="a configured build directory")
    source.add_argument("--json", help="a file written by ctest --show-only=json-v1")
    parser.add_argument("--ctest", default="ctest", help="the ctest to ask")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="the backends that must agree (default: all eight)")
    args = parser.parse_args()
    try:
        listing = read_tests(args)
        tests = [(t["name"], labels(t)) for t in listing["tests"]]
    except (OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
        print(f"parity: cannot read the list of tests: {e}", file=sys.stderr)
        return 2

    backends = args.backends.split(",")
    per_backend = {b: set() for b in backends}
    only = {}  # test: the backends it is for, where a label limits them
    for name, test_labels in tests:
        backend, _, rest = name.partition(".")
        if backend in per_backend:
            per_backend[backend].add(rest)
            for label in test_labels & ONLY.keys():
                only[rest] = ONLY[label]
    everything = set().union(*per_backend.values())
    missing = [f"{b}.{t}" for b in backends for t in sorted(everything - per_backend[b])
               if b in only.get(t, backends)]
    for name in missing:
        print(f"parity: {name} is not registered, but another backend has the test")
    if not everything:
        print("parity: no device tests at all")
        return 1
    if missing:
        return 1
    print(f"parity: {len(everything)} device tests on each of {', '.join(backends)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
