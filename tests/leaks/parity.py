"""The one-list checks: the bitcode, the stub archives and the manifests agree.

    parity.py manifest --llvm-bin DIR --bitcode devrt-amdgcn.bc --manifest FILE \
              --archive libdevrt_host.a
    parity.py shield --llvm-bin DIR --bitcode devrt-amdgcn.bc --shield FILE \
              --archive libdevrt_shield.a

manifest: the symbols the bitcode exports, the stubs libdevrt_host.a defines and the
manifest are one set, and each stub is a function or data as its device symbol is.
shield: the shield list covers every llvm.amdgcn.* name the bitcode declares, and
libdevrt_shield.a defines exactly the shield list. Each check runs its control first: the
same comparison with a symbol added on one side must find the difference.
"""
import argparse
import os
import re
import subprocess
import sys


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def names(path):
    with open(path) as f:
        return {line.strip() for line in f if line.strip()}


def nm(args, path):
    """{symbol: kind} of the defined external symbols, with the member of each."""
    tool = os.path.join(args.llvm_bin, "llvm-nm")
    out = subprocess.run([tool, "-A", "-P", "--defined-only", "--extern-only", path],
                         check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        where, _, rest = line.rpartition(": ")
        fields = rest.split()
        member = where[where.find("[") + 1:-1] if where.endswith("]") else ""
        symbol, letter = fields[0], fields[1]
        kind = "function" if letter in "Tt" else "data" if letter in "DdBbCRr" else letter
        found[symbol] = (kind, member)
    return found


def stubs(args):
    """The stubs an archive defines: everything but what the trap member defines."""
    defined = nm(args, args.archive)
    api = {s for s, (_, m) in defined.items() if m.startswith("trap")}
    if not api:
        fail(f"{args.archive} has no trap member")
    print(f"{os.path.basename(args.archive)} also defines the trap API: {sorted(api)}")
    return {s: k for s, (k, m) in defined.items() if s not in api}


def compare(what, a, b, a_name, b_name):
    """The differences between two sets, as a message, or None."""
    if a == b:
        return None
    return (f"{what}: only in {a_name}: {sorted(a - b)}; only in {b_name}: {sorted(b - a)}")


def check_manifest(args):
    manifest = names(args.manifest)
    bitcode = {s: k for s, (k, _) in nm(args, args.bitcode).items()}
    stub = stubs(args)

    def differences(manifest):
        return [d for d in (
            compare("bitcode exports vs manifest", set(bitcode), manifest, "bitcode", "manifest"),
            compare("stubs vs manifest", set(stub), manifest, "stubs", "manifest"),
        ) if d]

    # The control: a manifest with one symbol more must not match.
    if not differences(manifest | {"devrt_control_not_a_symbol"}):
        fail("control: an extra manifest symbol went unnoticed")
    print("ok: control: an extra manifest symbol is noticed")
    problems = differences(manifest)
    if problems:
        fail("; ".join(problems))
    print(f"ok: bitcode, stubs and manifest are the same {len(manifest)} symbols")
    wrong = {s: (bitcode[s], stub[s]) for s in manifest if bitcode[s] != stub[s]}
    if wrong:
        fail(f"stubs of another kind than their device symbol (bitcode, stub): {wrong}")
    print("ok: each stub is a function or data as its device symbol is "
          f"({sorted(s for s in manifest if stub[s] == 'data')} data)")


def declared_amdgcn(args):
    tool = os.path.join(args.llvm_bin, "llvm-dis")
    ir = subprocess.run([tool, args.bitcode, "-o", "-"], check=True, capture_output=True,
                        text=True).stdout
    return set(re.findall(r"^declare [^@]*@(llvm\.amdgcn\.[\w.]+)\(", ir, re.M))


def check_shield(args):
    shield = names(args.shield)
    declared = declared_amdgcn(args)
    if not declared:
        fail("the bitcode declares no llvm.amdgcn.* name: the parse is broken")
    print(f"the bitcode declares {sorted(declared)}")
    if not (declared | {"llvm.amdgcn.control.not.shielded"}) - shield:
        fail("control: an unshielded intrinsic went unnoticed")
    print("ok: control: an unshielded intrinsic is noticed")
    missing = declared - shield
    if missing:
        fail(f"shield.def lacks what the bitcode declares: {sorted(missing)}")
    print("ok: shield.def covers every llvm.amdgcn.* name the bitcode declares")
    problem = compare("shield stubs vs shield.def", set(stubs(args)), shield, "archive",
                      "shield.def")
    if problem:
        fail(problem)
    print(f"ok: libdevrt_shield.a defines exactly the {len(shield)} names of shield.def")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("check", choices=["manifest", "shield"])
    p.add_argument("--llvm-bin", required=True)
    p.add_argument("--bitcode", required=True)
    p.add_argument("--archive", required=True)
    p.add_argument("--manifest")
    p.add_argument("--shield")
    args = p.parse_args()
    check_manifest(args) if args.check == "manifest" else check_shield(args)


if __name__ == "__main__":
    main()
