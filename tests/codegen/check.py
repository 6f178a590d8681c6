"""The codegen tests: one check, one target per invocation (see tests/codegen/CMakeLists.txt).

    check.py CHECK --target gfx90a --llvm-bin DIR --include DIR --bitcode devrt-amdgcn.bc

Exits 0 when the check holds and 1 with the reason when it does not.
"""
import argparse
import collections
import os
import sys

import amdgcn

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
EXCEPTION_VGPR_BUDGET = 8


def kernel(name):
    return os.path.join(KERNELS, name)


def check_link(tc, cpu, tmp):
    """Every link path gives a code object with nothing undefined that exports the state."""
    for path in amdgcn.LINK_PATHS:
        co = tc.build(kernel("all_functions.c"), cpu, tmp, path=path)
        undefined = tc.undefined_symbols(co)
        if undefined:
            return f"{path}: undefined symbols {sorted(undefined)}"
        exported = tc.dynamic_symbols(co)
        if "__devrt_state" not in exported:
            return f"{path}: __devrt_state is not exported (exports: {sorted(exported)})"
        print(f"{cpu} {path}: linked, exports {sorted(exported)}")
    return None


def count_mbcnt(tc, cpu, tmp, flags):
    co = tc.build(kernel("lane_id.c"), cpu, tmp, flags=flags)
    return sum(1 for i in tc.instructions(co, cpu) if i.startswith("v_mbcnt"))


def check_lane_id(tc, cpu, tmp):
    """devrt_lane_id() is one v_mbcnt on wave32 and two on wave64."""
    cases = [((), amdgcn.TARGETS[cpu])]
    if amdgcn.TARGETS[cpu] == 32:
        cases.append((("-mwavefrontsize64",), 64))
    for flags, wave in cases:
        found = count_mbcnt(tc, cpu, tmp, flags)
        expected = 1 if wave == 32 else 2
        print(f"{cpu} wave{wave}: {found} v_mbcnt (expected {expected})")
        if found != expected:
            return f"wave{wave}: {found} v_mbcnt instructions, expected {expected}"
    return None


def check_no_cost(tc, cpu, tmp):
    """A kernel that uses no devrt function costs the same with the library linked."""
    without = tc.metadata(tc.build(kernel("no_runtime.c"), cpu, tmp, library=False))
    with_lib = tc.metadata(tc.build(kernel("no_runtime.c"), cpu, tmp))
    keys = ("vgpr", "sgpr", "agpr", "scratch")
    a = {k: without["no_runtime"][k] for k in keys}
    b = {k: with_lib["no_runtime"][k] for k in keys}
    print(f"{cpu}: without devrt {a}, with devrt {b}")
    return None if a == b else f"linking devrt changed the cost: {a} -> {b}"


def check_exception(tc, cpu, tmp):
    """Raising costs no scratch and at most EXCEPTION_VGPR_BUDGET VGPRs over the kernel's own."""
    base = tc.metadata(tc.build(kernel("exception.c"), cpu, tmp, flags=("-DBASELINE",)))
    full = tc.metadata(tc.build(kernel("exception.c"), cpu, tmp))
    base, full = base["exception"], full["exception"]
    extra = full["vgpr"] - base["vgpr"]
    print(f"{cpu}: baseline {base}, with exception {full}, +{extra} VGPRs")
    if full["scratch"] or full["dynamic_stack"]:
        return f"the exception path uses {full['scratch']} bytes of scratch"
    if extra > EXCEPTION_VGPR_BUDGET:
        return f"the exception path costs {extra} VGPRs, budget {EXCEPTION_VGPR_BUDGET}"
    return None


CHECKS = collections.OrderedDict(
    link=check_link, lane_id=check_lane_id, no_cost=check_no_cost, exception=check_exception)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("check", choices=CHECKS)
    parser.add_argument("--target", required=True, choices=amdgcn.TARGETS)
    parser.add_argument("--llvm-bin", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--bitcode", required=True)
    args = parser.parse_args()
    tc = amdgcn.Toolchain(args.llvm_bin, args.include, args.bitcode)
    try:
        failure = CHECKS[args.check](tc, args.target, amdgcn.workdir())
    except amdgcn.BuildError as e:
        failure = f"build failed: {e}"
    if failure:
        print(f"FAIL {args.check} {args.target}: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
