#!/usr/bin/env python3
"""The RPC client's polls on nvptx, read from the PTX of its steps.

tests/codegen/kernels/rpc_steps.c, compiled for nvptx64 with the device's own headers, must
show the two poll orders of device/arch/nvptx.h:

  step_reply      a lane's one-word reply: every load in the poll loop is a strong load of
                  system scope (ld.volatile, ld.relaxed.sys or ld.acquire.sys), one of them
                  ld.acquire.sys, and no system fence follows the loop (the acquire load did
                  its work; fence.acq_rel.sys waits on the bus);
  step_hand_back  the port's hand-back: the poll's loads are strong and relaxed (an acquire
                  load invalidates the SM's L1 at every poll), and a system fence follows
                  the loop before the reply packet is read.

Prints PASS or FAIL lines; exits 0 when every check passes, 1 when one fails, 2 on bad use.
"""
import argparse
import re
import subprocess
import sys

STRONG = re.compile(r"^ld\.(volatile|relaxed\.sys|acquire\.sys)\.")
SYSTEM_FENCE = re.compile(r"^fence\.(acq_rel|sc)\.sys\b")


def compile_steps(args):
    command = [args.clang, "-target", "nvptx64-nvidia-cuda", "-march=sm_70", "-nogpulib",
               "-ffreestanding", "-std=c17", "-O2", "-Xclang", "-target-feature", "-Xclang",
               "+ptx70", "-I", args.include, "-I", args.device, "-S", "-o", "-", args.source]
    command += [f"-D{define}" for define in args.define]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        sys.exit(2)
    return result.stdout


def entry(ptx, name):
    """The instructions of kernel NAME, comments and blank lines dropped."""
    match = re.search(r"\.entry\s+" + name + r"\(.*?\n\{\n(.*?)\n\}", ptx, re.S)
    if not match:
        return None
    lines = (" ".join(line.split("//")[0].split()) for line in match.group(1).splitlines())
    return [line for line in lines if line]


def poll_loop(code):
    """The indices of the sleep loop's first and last lines: from a label to the branch back
    to it, with a nanosleep between."""
    for last, line in enumerate(code):
        branch = re.search(r"\bbra(\.uni)?\s+(\S+);", line)
        if not branch:
            continue
        label = branch.group(2) + ":"
        if label in code[:last]:
            first = code.index(label)
            if any(text.startswith("nanosleep") for text in code[first:last]):
                return first, last
    return None


def loads(lines):
    return [line for line in lines if line.startswith("ld.") and not line.startswith("ld.param")]


def check_reply(code):
    first, last = poll_loop(code)
    polled = loads(code[first:last])
    if len(polled) != 2:
        return f"the poll loads {len(polled)} words, not the slot's two halves: {polled}"
    weak = [line for line in polled if not STRONG.match(line)]
    if weak:
        return f"the poll has a load that may read a cached slot: {weak[0]}"
    if not any(line.startswith("ld.acquire.sys.") for line in polled):
        return f"no load of the poll acquires (ld.acquire.sys): {polled}"
    fences = [line for line in code[last:] if SYSTEM_FENCE.match(line)]
    if fences:
        return f"a system fence follows the acquiring poll: {fences[0]}"
    print(f"  reply: {' '.join(polled)} no fence after")
    return None


def check_hand_back(code):
    first, last = poll_loop(code)
    polled = loads(code[first:last])
    if not polled or any(not STRONG.match(line) for line in polled):
        return f"the poll has a load that may read a cached inbox: {polled}"
    acquiring = [line for line in polled if line.startswith("ld.acquire")]
    if acquiring:
        return f"the hand-back's poll acquires at every poll: {acquiring[0]}"
    after = code[last + 1:]
    fence = next((i for i, line in enumerate(after) if SYSTEM_FENCE.match(line)), None)
    if fence is None or not loads(after[fence:]):
        return "no system fence between the poll and the reply packet's read"
    print(f"  hand-back: {polled[0]} then {after[fence]}")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clang", required=True)
    parser.add_argument("--include", required=True, help="the project's include/")
    parser.add_argument("--device", required=True, help="the project's device/")
    parser.add_argument("--source", required=True, help="tests/codegen/kernels/rpc_steps.c")
    parser.add_argument("--define", action="append", default=[], help="a control's macro")
    args = parser.parse_args()
    ptx = compile_steps(args)
    failed = False
    for name, check in (("step_reply", check_reply), ("step_hand_back", check_hand_back)):
        code = entry(ptx, name)
        problem = f"no kernel {name} in the PTX" if code is None else None
        if code is not None and poll_loop(code) is None:
            problem = "no poll loop (a branch back over a nanosleep)"
        problem = problem or check(code)
        print(f"{'FAIL' if problem else 'PASS'} poll_order {name}" + (f": {problem}" if problem else ""))
        failed |= problem is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
