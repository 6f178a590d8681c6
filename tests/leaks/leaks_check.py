"""Checks of devrt-leaks, one group per invocation (see CMakeLists.txt).

    leaks_check.py GROUP --leaks devrt-leaks --manifest FILE --shield FILE [paths...]

Exits 0 when every check of the group holds and 1 naming the first that does not. Each
group also runs a control: an input that must be reported, so a scanner that reports
nothing cannot pass.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ARGS = None


class Failed(Exception):
    pass


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        raise Failed(what)


def names(path):
    with open(path) as f:
        return {line.strip() for line in f if line.strip()}


def run(*args, input_files=(), timeout=120):
    cmd = [ARGS.leaks, *args, *input_files]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def scan_json(*files, stubs=()):
    opts = ["--json"]
    for s in stubs:
        opts += ["--stubs", s]
    rc, out, err = run(*opts, input_files=files)
    try:
        doc = json.loads(out)
    except json.JSONDecodeError as e:
        raise Failed(f"devrt-leaks --json wrote no valid JSON ({e}): {out[:500]} {err}")
    return rc, doc, err


def leak_set(doc, with_member=False, with_covered=False):
    found = set()
    for f in doc["files"]:
        for leak in f["leaks"]:
            key = (leak["symbol"], leak["function"])
            if with_member:
                key = (leak["member"],) + key
            if with_covered:
                key += (leak["covered"],)
            found.add(key)
    return found


def image_expected():
    """What image.c references: each manifest symbol from image_ref_<name>, and one call."""
    expected = {(s, "image_ref_" + s) for s in names(ARGS.manifest)}
    expected.add(("devrt_lane_id", "image_call"))
    expected.add(("__devrt_state", "image_state_is_null"))
    return expected


SHIELD_EXPECTED = {("julia.gpu.state_getter", "shield_call"),
                   ("llvm.amdgcn.mbcnt.lo", "shield_lane")}


def group_objects():
    """Relocatable objects: exactly the leaked symbols, each with its referencing function."""
    rc, doc, _ = scan_json(ARGS.image_o)
    check(rc == 1, f"image.o: exit status 1 (got {rc})")
    found = leak_set(doc)
    check(found == image_expected(),
          f"image.o: every manifest symbol and nothing else, with its function "
          f"(missing {sorted(image_expected() - found)}, extra {sorted(found - image_expected())})")
    rc, doc, _ = scan_json(ARGS.shield_o)
    check(rc == 1, f"shield_image.o: exit status 1 (got {rc})")
    check(leak_set(doc) == SHIELD_EXPECTED, f"shield_image.o: the two foreign symbols with "
          f"their functions (got {sorted(leak_set(doc))})")

    # The text report: one line per leak, file: symbol (referenced by function).
    rc, out, err = run(input_files=[ARGS.shield_o])
    lines = sorted(out.splitlines())
    want = sorted(f"{ARGS.shield_o}: {s} (referenced by {f})" for s, f in SHIELD_EXPECTED)
    check(rc == 1 and lines == want, f"text report lists the leaks (got {lines}, {err})")
    check("2 device-only references" in err, "text report ends with a summary on stderr")
    # Both streams into one pipe, as a CI log takes them: each file's lines come before the
    # next file's message and the summary (stdout, a pipe's, is flushed after each file).
    missing = ARGS.shield_o + ".missing"
    p = subprocess.run([ARGS.leaks, ARGS.shield_o, missing], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    lines = p.stdout.splitlines()
    order = [0 if line.startswith(ARGS.shield_o + ": ") else
             1 if line.startswith(f"devrt-leaks: {missing}: ") else
             2 if "device-only references" in line else 3 for line in lines]
    check(p.returncode == 2 and order == [0, 0, 1, 2],
          f"text report and messages in order in one pipe (exit {p.returncode}, got {lines})")

    # Linked images: the dynamic symbols, without functions (no relocation says which).
    rc, doc, _ = scan_json(ARGS.image_bare)
    want = {(s, None) for s in names(ARGS.manifest)}
    check(rc == 1 and leak_set(doc) == want,
          f"image without stubs (.so): every manifest symbol (got {sorted(leak_set(doc))})")
    rc, doc, _ = scan_json(ARGS.shield_bare)
    check(rc == 1 and leak_set(doc) == {(s, None) for s, _ in SHIELD_EXPECTED},
          f"shield image without stubs (.so): the two symbols (got {sorted(leak_set(doc))})")
    for image in (ARGS.image_stubbed, ARGS.shield_stubbed):
        rc, doc, err = scan_json(image)
        check(rc == 0 and not leak_set(doc), f"{os.path.basename(image)} linked with its stubs: "
              f"nothing leaks (exit {rc}, {sorted(leak_set(doc))}, {err})")


def group_archive():
    """An archive: each member read, leaks named with their member."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "images.a")
        subprocess.run([ARGS.llvm_ar, "rcs", archive, ARGS.image_o, ARGS.shield_o,
                        ARGS.manifest], check=True)
        rc, doc, err = scan_json(archive)
        image_member = os.path.basename(ARGS.image_o)
        shield_member = os.path.basename(ARGS.shield_o)
        want = {(image_member, s, f) for s, f in image_expected()}
        want |= {(shield_member, s, f) for s, f in SHIELD_EXPECTED}
        found = leak_set(doc, with_member=True)
        check(rc == 1 and found == want, f"archive: the leaks of both members, by member "
              f"(exit {rc}, missing {sorted(want - found)}, extra {sorted(found - want)})")
        skipped = doc["files"][0]["skipped_members"]
        check(skipped == [os.path.basename(ARGS.manifest)],
              f"archive: the text member is named as skipped (got {skipped})")
        rc, out, err = run(input_files=[archive])
        check(f"{archive}({shield_member}): llvm.amdgcn.mbcnt.lo (referenced by shield_lane)"
              in out.splitlines(), "archive: text report names the member")
        check("not an ELF object" in err, "archive: text report warns about the skipped member")


def group_stubs():
    """--stubs: leaks that a stub archive defines count as covered."""
    rc, doc, _ = scan_json(ARGS.image_o, stubs=[ARGS.host_archive])
    found = leak_set(doc, with_covered=True)
    check(rc == 0 and found == {k + (True,) for k in image_expected()},
          f"image.o with --stubs libdevrt_host.a: every leak covered, exit 0 (exit {rc})")
    check(doc["covered"] == len(found) and doc["uncovered"] == 0, "the summary counts them")
    # The control: the other archive covers none of them.
    rc, doc, _ = scan_json(ARGS.image_o, stubs=[ARGS.shield_archive])
    check(rc == 1 and doc["covered"] == 0 and doc["uncovered"] == len(image_expected()),
          f"image.o with --stubs libdevrt_shield.a: nothing covered, exit 1 (exit {rc})")
    rc, doc, _ = scan_json(ARGS.shield_o, ARGS.image_o,
                           stubs=[ARGS.shield_archive, ARGS.host_archive])
    check(rc == 0 and doc["uncovered"] == 0, "both archives cover both objects")
    rc, out, _ = run("--stubs", ARGS.shield_archive, input_files=[ARGS.shield_o])
    check(rc == 0 and all(line.endswith("[covered by stubs]") for line in out.splitlines())
          and len(out.splitlines()) == 2, f"text report marks covered leaks ({out})")
    # The stub archives define the device symbols; they reference none.
    for archive in (ARGS.host_archive, ARGS.shield_archive):
        rc, doc, err = scan_json(archive)
        check(rc == 0 and not leak_set(doc), f"{os.path.basename(archive)} references no "
              f"device-only symbol ({sorted(leak_set(doc))}, {err})")


def group_bits32():
    """A 32-bit object is read like a 64-bit one."""
    with open(ARGS.leaks32_o, "rb") as f:
        ident = f.read(5)
    check(ident[:4] == b"\x7fELF" and ident[4] == 1, "the input really is ELFCLASS32")
    rc, doc, err = scan_json(ARGS.leaks32_o)
    check(rc == 1 and leak_set(doc) == {("devrt_lane_id", "leaks32_lane")},
          f"32-bit object: its leak and function (exit {rc}, {sorted(leak_set(doc))}, {err})")


def expect_unreadable(path, reason, label):
    rc, out, err = run(input_files=[path])
    check(rc == 2, f"{label}: exit status 2 (got {rc})")
    check(f"devrt-leaks: {path}: " in err and reason in err,
          f"{label}: message names the file and says '{reason}' (got {err.strip()!r})")


def group_bad():
    """Inputs that are not ELF, and wrong command lines: exit 2 with a clear message."""
    with tempfile.TemporaryDirectory() as tmp:
        def write(name, data):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            return path

        with open(ARGS.image_o, "rb") as f:
            good = f.read()
        expect_unreadable(write("empty.o", b""), "empty file", "empty file")
        expect_unreadable(write("short.o", good[:20]), "truncated", "ELF cut inside its header")
        expect_unreadable(write("cut.o", good[:200]), "", "ELF cut after its header")
        expect_unreadable(write("text.o", b"just some text\n" * 10), "not an ELF file",
                          "non-ELF file")
        expect_unreadable(write("script.so", b"/* GNU ld script */\nGROUP ( libc.so.6 )\n"),
                          "not an ELF file", "linker script")
        expect_unreadable(tmp, "is a directory", "directory")
        expect_unreadable(os.path.join(tmp, "missing.o"), "No such file", "missing file")
        expect_unreadable(write("bad.a", b"!<arch>\nnot a member header at all\n"), "",
                          "archive with a broken member header")
        thin_header = b"/               0           0     0     644     8         `\n"
        expect_unreadable(write("thin.a", b"!<thin>\n" + thin_header), "thin archive",
                          "thin archive")
        # The section headers point past the end of the file.
        broken = bytearray(good[:len(good) // 2])
        expect_unreadable(write("half.o", bytes(broken)), "", "ELF cut in half")

        # One bad input among good ones: the good are still reported, the exit is 2.
        rc, doc, err = scan_json(ARGS.shield_o, os.path.join(tmp, "missing.o"))
        check(rc == 2 and leak_set(doc) == SHIELD_EXPECTED and doc["errors"] == 1,
              f"a bad input among good ones: exit 2, the good still reported (exit {rc})")
        check(doc["files"][1]["error"] is not None, "--json names the error of the bad input")

        # The control: the same bytes, whole, are read.
        rc, _, _ = run(input_files=[write("whole.o", good)])
        check(rc == 1, "control: the uncut object is read (exit 1)")

    for args, what in ((["--bogus", ARGS.image_o], "unknown option"),
                       (["--stubs"], "--stubs without its archive"),
                       ([], "no input files"),
                       (["--json"], "options but no input files")):
        rc, out, err = run(*args)
        check(rc == 2 and "usage: devrt-leaks" in err and out == "",
              f"{what}: exit 2 with the usage on stderr (exit {rc}, {err.strip()!r})")
    rc, out, err = run("--stubs", "/nonexistent/stubs.a", ARGS.image_o)
    check(rc == 2 and "/nonexistent/stubs.a" in err, f"a missing --stubs archive is named ({err})")
    rc, out, _ = run("--help")
    check(rc == 0 and out.startswith("usage: devrt-leaks"), "--help prints the usage")
    rc, out, err = run("--version")
    check(rc == 0 and re.fullmatch(r"devrt-leaks \(devrt \d+\.\d+\.\d+\)\n", out) is not None
          and err == "", f"--version prints devrt's version (exit {rc}, {out!r})")


def elf_or_archive(path):
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return head[:4] == b"\x7fELF" or head == b"!<arch>\n"


def scan_all(files, what, control):
    """Scans files in batches; all must be read and none may leak except the control."""
    start = time.monotonic()
    batch = 100
    leaks, seen = set(), 0
    for i in range(0, len(files), batch):
        part = files[i:i + batch]
        rc, doc, err = scan_json(*part)
        errors = [(f["file"], f["error"]) for f in doc["files"] if f["error"]]
        check(not errors, f"{what}: every file is read (errors: {errors[:5]})")
        check(rc in (0, 1), f"{what}: devrt-leaks exits 0 or 1 (got {rc}: {err[-300:]})")
        leaks |= {(f["file"], l["symbol"]) for f in doc["files"] for l in f["leaks"]}
        seen += len(part)
    print(f"{what}: {seen} files in {time.monotonic() - start:.1f} s")
    want = {(control, s) for s, _ in control_leaks()}
    check(leaks == want, f"{what}: no leak but the control's (extra {sorted(leaks - want)[:10]}, "
          f"missing {sorted(want - leaks)[:5]})")


def control_leaks():
    return SHIELD_EXPECTED


def group_system():
    """Every library in the system's library directory: read, nothing reported."""
    libdir = ARGS.system_libdir
    files = sorted(os.path.join(libdir, n) for n in os.listdir(libdir)
                   if (".so" in n or n.endswith(".a")))
    files = [f for f in files if os.path.isfile(f) and not os.path.islink(f)]
    elf = [f for f in files if elf_or_archive(f)]
    print(f"{len(files)} libraries in {libdir}, {len(elf)} ELF or archives "
          f"(the rest are linker scripts)")
    # Largest last and bounded in bytes, so the test stays well under a minute.
    elf.sort(key=os.path.getsize)
    budget, chosen = ARGS.system_bytes, []
    for f in elf:
        size = os.path.getsize(f)
        if size > budget:
            break
        budget -= size
        chosen.append(f)
    print(f"scanning {len(chosen)} of them ({ARGS.system_bytes - budget} bytes)")
    check(len(chosen) >= min(len(elf), 50), "enough of them fit the budget")
    # The control rides in the middle of the list.
    chosen.insert(len(chosen) // 2, ARGS.shield_o)
    scan_all(chosen, libdir, ARGS.shield_o)


def group_own():
    """devrt's own host artifacts (objects, archives, programs) reference no device symbol."""
    files = []
    for top in ARGS.own:
        for root, _, entries in os.walk(top):
            for e in entries:
                path = os.path.join(root, e)
                if os.path.isfile(path) and not os.path.islink(path) and elf_or_archive(path):
                    files.append(path)
    files.sort()
    print(f"{len(files)} host artifacts under {', '.join(ARGS.own)}")
    check(any(f.endswith("libdevrt_host.a") for f in files), "libdevrt_host.a is among them")
    check(any(f.endswith("devrt-leaks") for f in files), "devrt-leaks is among them")
    files.append(ARGS.shield_o)
    scan_all(files, "own artifacts", ARGS.shield_o)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("group")
    p.add_argument("--leaks", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--image-o")
    p.add_argument("--shield-o")
    p.add_argument("--image-bare")
    p.add_argument("--image-stubbed")
    p.add_argument("--shield-bare")
    p.add_argument("--shield-stubbed")
    p.add_argument("--host-archive")
    p.add_argument("--shield-archive")
    p.add_argument("--leaks32-o")
    p.add_argument("--llvm-ar")
    p.add_argument("--system-libdir", default="/usr/lib/x86_64-linux-gnu")
    p.add_argument("--system-bytes", type=int, default=1 << 30)
    p.add_argument("--own", nargs="*", default=[])
    ARGS = p.parse_args()
    try:
        globals()["group_" + ARGS.group]()
    except Failed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
