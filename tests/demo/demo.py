"""The main demo: link a kernel that uses every devrt function for each supported gfx
target and show what it costs; then run a kernel that allocates, prints and raises an
exception on the best backend present (HSA where an AMD GPU is, else the emulation)."""
import argparse
import os
import subprocess
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
    parser.add_argument("--devrt-run", required=True)
    parser.add_argument("--emu-image", required=True)
    parser.add_argument("--hsa-image", required=True)
    args = parser.parse_args()
    tc = amdgcn.Toolchain(args.llvm_bin, args.include, args.bitcode)
    tmp = amdgcn.workdir()
    print(f"devrt: {args.bitcode}")
    print("kernel all_functions (every device function), linked the way a JIT does:\n")
    # As wide as the longest target's name (gfx9-4-generic), so that the columns line up.
    w = max(len("target"), *(len(cpu) for cpu in amdgcn.TARGETS))
    print(f"{'target':{w}} {'wave':>4} {'VGPRs':>5} {'SGPRs':>5} {'scratch':>7}  result", flush=True)
    failed = 0
    llvm = tc.llvm_major()
    for cpu, wave in amdgcn.TARGETS.items():
        # The table lists every target devrt supports; this LLVM knows only some of them.
        first = amdgcn.gfx_targets.ROWS[cpu]["llvm"]
        if first > llvm:
            print(f"{cpu:{w}} {wave:>4} {'-':>5} {'-':>5} {'-':>7}  skipped: needs LLVM {first} "
                  f"or newer (this is LLVM {llvm}; docs/llvm-versions.md)")
            continue
        try:
            co = tc.build(KERNEL, cpu, tmp)
            m = tc.metadata(co)["all_functions"]
            print(f"{cpu:{w}} {wave:>4} {m['vgpr']:>5} {m['sgpr']:>5} {m['scratch']:>7}  linked")
        except amdgcn.BuildError as e:
            failed += 1
            print(f"{cpu:{w}} {wave:>4} {'-':>5} {'-':>5} {'-':>7}  FAILED: {e}")
    return 1 if failed or not run_demo_kernel(args) else 0


def run_demo_kernel(args):
    """Run the demo kernel; True when it behaved as the demo expects (an exception)."""
    launch = ["demo", "--grid", "2", "--block", "4", "--", "u32:6"]
    hsa = subprocess.run([args.devrt_run, args.hsa_image, "--backend", "hsa"] + launch,
                         capture_output=True, text=True)
    if hsa.returncode == 2 and "devrt-run: hsa backend:" in hsa.stderr:
        reason = hsa.stderr.strip().splitlines()[0].split("hsa backend: ", 1)[1]
        print(f"\nThe demo kernel on the host emulation backend ({reason}):", flush=True)
        result = subprocess.run([args.devrt_run, args.emu_image, "--backend", "emu"] + launch)
        code = result.returncode
    else:
        print("\nThe demo kernel on the AMD GPU, through the HSA backend:", flush=True)
        sys.stdout.write(hsa.stdout)
        sys.stderr.write(hsa.stderr)
        code = hsa.returncode
    sys.stderr.flush()
    print(f"devrt-run exited with {code} (1: the kernel raised an exception, as the demo intends)")
    return code == 1


if __name__ == "__main__":
    sys.exit(main())
