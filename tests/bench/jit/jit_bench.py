#!/usr/bin/env python3
"""The JIT link path against the command-line tools' path, for one kernel and each target.

    jit_bench.py --jit BUILD-JIT/jit --bitcode-dir BUILD/lib/devrt [--llvm-bin DIR] [-n 11]
                 [--targets gfx90a gfx1100 gfx1201 sm_90]

The kernel is the one examples/jit builds with LLVM-C (saved with --save-kernel, so both
paths start from the same module). The JIT links devrt in memory, optimizes, generates code
(and runs ld.lld for amdgcn) in one process; the tools do the same in four:

    llvm-link --only-needed kernel.bc devrt-*.bc -o linked.bc
    opt -mcpu=T -passes='internalize,globaldce,default<O2>'
        -internalize-public-api-list=devrt_jit_kernel,__devrt_state linked.bc -o opt.bc
    llc -O2 -mcpu=T [-filetype=obj | -mattr=+ptxNN] opt.bc -o kernel.{o,ptx}
    ld.lld -shared --no-undefined kernel.o -o kernel.hsaco                      (amdgcn)

Runs alternate between the two paths; every figure is the median of N runs, in seconds.
The JIT's steps are its own --time figures; "process" is its wall time from start to exit.
Run it on an otherwise idle machine: the load average is printed with the figures.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

KEEP = "devrt_jit_kernel,__devrt_state"
# As jit.c picks it: the PTX ISA version for the GPU, at least devrt-nvptx.bc's 7.0.
PTX = {"sm_70": "+ptx70", "sm_75": "+ptx70", "sm_80": "+ptx70", "sm_86": "+ptx71",
       "sm_89": "+ptx78", "sm_90": "+ptx78"}


def run(*args):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"jit_bench: {' '.join(map(str, args))} failed:\n{proc.stderr}")
    return proc


def timed(*args):
    start = time.perf_counter()
    proc = run(*args)
    return time.perf_counter() - start, proc


def jit_once(jit, bitcode, target, out):
    wall, proc = timed(jit, "--bitcode", bitcode, "--target", target, "-o", out, "--time")
    m = re.search(r"seconds: (.*)", proc.stderr)
    steps = dict(re.findall(r"(\w+) ([0-9.]+)", m.group(1)))
    steps = {k: float(v) for k, v in steps.items()}
    steps["process"] = wall
    return steps


def tools_once(tool, kernel, bitcode, target, work):
    nvptx = target.startswith("sm_")
    linked, optimized = os.path.join(work, "linked.bc"), os.path.join(work, "opt.bc")
    steps = {}
    steps["link"], _ = timed(tool("llvm-link"), "--only-needed", kernel, bitcode, "-o", linked)
    steps["optimize"], _ = timed(tool("opt"), f"-mcpu={target}",
                                 "-passes=internalize,globaldce,default<O2>",
                                 f"-internalize-public-api-list={KEEP}", linked, "-o", optimized)
    if nvptx:
        out = os.path.join(work, "kernel.ptx")
        steps["codegen"], _ = timed(tool("llc"), "-O2", f"-mcpu={target}",
                                    f"-mattr={PTX[target]}", optimized, "-o", out)
        steps["lld"] = 0.0
    else:
        obj, out = os.path.join(work, "kernel.o"), os.path.join(work, "kernel.hsaco")
        steps["codegen"], _ = timed(tool("llc"), "-O2", f"-mcpu={target}", "-filetype=obj",
                                    optimized, "-o", obj)
        steps["lld"], _ = timed(tool("ld.lld"), "-shared", "--no-undefined", obj, "-o", out)
    steps["total"] = sum(steps.values())
    return steps, out


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jit", required=True, help="examples/jit's jit program")
    parser.add_argument("--bitcode-dir", required=True,
                        help="the directory of devrt-amdgcn.bc and devrt-nvptx.bc")
    parser.add_argument("--llvm-bin", default="/usr/lib/llvm-19/bin")
    parser.add_argument("-n", type=int, default=11, help="runs of each path (default 11)")
    parser.add_argument("--targets", nargs="+", default=["gfx90a", "gfx1100", "gfx1201", "sm_90"])
    args = parser.parse_args()
    if args.n < 1:
        parser.error("-n must be at least 1")
    for target in args.targets:
        if not target.startswith("gfx") and target not in PTX:
            parser.error(f"unknown target {target}")

    def tool(name):
        return os.path.join(args.llvm_bin, name)

    cpus = len(os.sched_getaffinity(0))
    version = re.search(r"LLVM version (\S+)", run(tool("opt"), "--version").stdout).group(1)
    print(f"{platform.processor() or platform.machine()}, {cpus} cores, load average "
          f"{os.getloadavg()[0]:.2f}; LLVM {version}; "
          f"median of {args.n} runs, seconds")
    print()
    print("| target | JIT: load | link | optimize | codegen | ld.lld | in process | process "
          "| tools: llvm-link | opt | llc | ld.lld | total | tools / JIT process |")
    print("| --- " + "| ---: " * 13 + "|")
    with tempfile.TemporaryDirectory(prefix="devrt-jit-bench-") as work:
        for target in args.targets:
            family = "nvptx" if target.startswith("sm_") else "amdgcn"
            bitcode = os.path.join(args.bitcode_dir, f"devrt-{family}.bc")
            kernel = os.path.join(work, f"kernel.{target}.bc")
            out = os.path.join(work, f"jit.{target}.{'ptx' if family == 'nvptx' else 'hsaco'}")
            run(args.jit, "--bitcode", bitcode, "--target", target, "-o", out,
                "--save-kernel", kernel)
            jit_runs, tool_runs = [], []
            for _ in range(args.n):
                jit_runs.append(jit_once(args.jit, bitcode, target, out))
                steps, _ = tools_once(tool, kernel, bitcode, target, work)
                tool_runs.append(steps)
            j = {k: median(jit_runs, k) for k in jit_runs[0]}
            t = {k: median(tool_runs, k) for k in tool_runs[0]}
            in_process = median(jit_runs, "total")
            lld = f"{j['lld']:.3f}" if family == "amdgcn" else "-"
            tlld = f"{t['lld']:.3f}" if family == "amdgcn" else "-"
            print(f"| {target} | {j['load']:.3f} | {j['link']:.3f} | {j['optimize']:.3f} | {j['codegen']:.3f} "
                  f"| {lld} | {in_process:.3f} | {j['process']:.3f} "
                  f"| {t['link']:.3f} | {t['optimize']:.3f} | {t['codegen']:.3f} | {tlld} "
                  f"| {t['total']:.3f} | {t['total'] / j['process']:.2f}× |")
    # What part of a tool's time is only its start: loading the shared libLLVM.
    start = statistics.median(timed(tool("ld.lld"), "--version")[0] for _ in range(args.n))
    print()
    print(f"`ld.lld --version` alone (a tool's start-up): {start:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
