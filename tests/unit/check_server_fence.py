"""The server orders arming the doorbell before its rescan of the ports (issue 15, defect 5).

    check_server_fence.py OBJDUMP LIBDEVRT_ARCHIVE

A release store (HSA's arming of the doorbell) does not keep later loads from passing it;
the server must put a full barrier between the backend's arm_doorbell and the serve_all
that rescans. On x86-64 that is an mfence, a lock-prefixed instruction or an xchg with
memory. This reads server_main's code: the barrier must lie between the last indirect call
(arm_doorbell through the ops table) before the second call of serve_all, and that call.
On other hosts it skips (77). Exits 1 with the reason when the barrier is missing.
"""
import platform
import re
import subprocess
import sys

BARRIER = re.compile(r"\b(mfence|lock\b|xchg)")


def main():
    if platform.machine() not in ("x86_64", "AMD64"):
        print("skipped: the check reads x86-64 code")
        return 77
    objdump, archive = sys.argv[1:3]
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", archive], check=True,
                          capture_output=True, text=True).stdout
    m = re.search(r"<server_main>:\n(.*?)(?:\n\n|\Z)", text, re.S)
    if not m:
        print("FAIL: no server_main in the archive", file=sys.stderr)
        return 1
    code = [line.split(":", 1)[1].strip() for line in m.group(1).splitlines() if ":" in line]
    serves = [i for i, ins in enumerate(code) if re.search(r"call\s.*<serve_all>", ins)]
    if len(serves) < 2:
        print(f"FAIL: serve_all is called {len(serves)} times, not inline-free twice",
              file=sys.stderr)
        return 1
    rescan = serves[1]
    arm = max((i for i in range(rescan) if re.search(r"call\s+\*", code[i])), default=None)
    if arm is None:
        print("FAIL: no indirect call (arm_doorbell) before the rescan", file=sys.stderr)
        return 1
    between = code[arm + 1:rescan]
    barriers = [ins for ins in between if BARRIER.search(ins)]
    print(f"arm_doorbell: {code[arm]}; rescan: {code[rescan]}; between: {between}")
    if not barriers:
        print("FAIL: no full barrier between arming the doorbell and the rescan",
              file=sys.stderr)
        return 1
    print(f"ok: {barriers[0]} orders the arming before the rescan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
