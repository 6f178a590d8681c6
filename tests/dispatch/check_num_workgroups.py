#!/usr/bin/env python3
"""check_num_workgroups.py --readelf R --objdump O --image I --version V

devrt_num_workgroups in a kernel built for code object version V: on 5 and later it reads
the block count (the note lists hidden_block_count_x, and the code divides nothing); on 4,
which has no block counts, it divides the packet's grid (a v_rcp of the division, no block
count listed). devrt's bitcode of LLVM 16 or 22 divides on every version (--llvm).
Exit status: 0 as expected, 1 not, 2 a tool failed.
"""
import argparse
import subprocess
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_dispatch import readelf_metadata  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--readelf", required=True)
    p.add_argument("--objdump", required=True)
    p.add_argument("--image", required=True)
    p.add_argument("--version", type=int, required=True)
    p.add_argument("--llvm", type=int, default=19,
                   help="the LLVM that built devrt's bitcode: but for 17 to 19 it divides on "
                        "every version (device/arch/amdgcn.h)")
    a = p.parse_args()
    (kernel,) = [k for k in readelf_metadata(a.readelf, a.image)["amdhsa.kernels"]
                 if k[".name"] == "count_workgroups"]
    kinds = {arg[".value_kind"] for arg in kernel.get(".args", [])}
    out = subprocess.run([a.objdump, "-d", "--disassemble-symbols=count_workgroups", a.image],
                         capture_output=True, text=True)
    if out.returncode != 0 or "s_endpgm" not in out.stdout:
        print(f"llvm-objdump failed: {out.stderr}", file=sys.stderr)
        return 2
    divides = "v_rcp" in out.stdout
    reads_count = "hidden_block_count_x" in kinds
    print(f"version {a.version}: hidden_block_count_x listed: {reads_count}, divides: {divides}")
    if not 17 <= a.llvm <= 19:
        if not divides:
            print("FAIL: LLVM %d's bitcode cannot tell the version: it must divide" % a.llvm)
            return 1
        return 0
    if a.version >= 5 and (divides or not reads_count):
        print("FAIL: version 5 and later must read the block count, not divide")
        return 1
    if a.version == 4 and (reads_count or not divides):
        print("FAIL: version 4 has no block counts: the grid must be divided")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
