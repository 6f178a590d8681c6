"""The main demo: link a kernel that uses every devrt function for each supported gfx
target and show what it costs."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "codegen"))
import amdgcn  # noqa: E402

KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "codegen", "kernels",
                      "all_functions.c")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--llvm-bin", required=True)
    parser.add_argument("--include", required=True)
    parser.add_argument("--bitcode", required=True)
    args = parser.parse_args()
    tc = amdgcn.Toolchain(args.llvm_bin, args.include, args.bitcode)
    tmp = amdgcn.workdir()
    print(f"devrt: {args.bitcode}")
    print("kernel all_functions (every device function), linked the way a JIT does:\n")
    print(f"{'target':8} {'wave':>4} {'VGPRs':>5} {'SGPRs':>5} {'scratch':>7}  result")
    failed = 0
    for cpu, wave in amdgcn.TARGETS.items():
        try:
            co = tc.build(KERNEL, cpu, tmp)
            m = tc.metadata(co)["all_functions"]
            print(f"{cpu:8} {wave:>4} {m['vgpr']:>5} {m['sgpr']:>5} {m['scratch']:>7}  linked")
        except amdgcn.BuildError as e:
            failed += 1
            print(f"{cpu:8} {wave:>4} {'-':>5} {'-':>5} {'-':>7}  FAILED: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
