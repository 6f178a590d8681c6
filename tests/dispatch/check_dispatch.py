#!/usr/bin/env python3
"""The dispatch devrt computes for each kernel of a code object, against llvm-readelf.

For every kernel llvm-readelf --notes lists in ORACLE (default: the image itself), runs
devrt-run --explain --json on IMAGE with a known geometry and known argument values, and
checks that its kernarg bytes put every explicit and hidden argument where the note says,
with the size it says and the value it must have, that nothing else in the segment is set,
and that the packet's segment sizes are the note's. llvm-readelf is LLVM's own reader,
independent of the libelf and msgpack-c code under test.

Exit status: 0 every kernel checks, 1 a mismatch (each printed), 2 a tool failed.
"""
import argparse
import json
import re
import subprocess
import sys

GRID = (5, 3, 2)
BLOCK = (16, 4, 2)


def scalar(text):
    text = text.strip()
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1]
    if text == "[]":
        return []
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def parse_yaml(lines):
    """The block-style subset of YAML that llvm-readelf prints for the metadata note."""
    toks = [[len(line) - len(line.lstrip(" ")), line.strip()] for line in lines if line.strip()]
    pos = 0

    def node(indent):
        nonlocal pos
        if toks[pos][1].startswith("- "):
            out = []
            while pos < len(toks) and toks[pos][0] == indent and toks[pos][1].startswith("- "):
                rest = toks[pos][1][2:]
                if ":" in rest:  # a map that begins on the item's line
                    toks[pos] = [indent + 2, rest]
                    out.append(node(indent + 2))
                else:
                    out.append(scalar(rest))
                    pos += 1
            return out
        out = {}
        while pos < len(toks) and toks[pos][0] == indent and not toks[pos][1].startswith("- "):
            key, _, value = toks[pos][1].partition(":")
            pos += 1
            if value.strip():
                out[key] = scalar(value)
            elif pos < len(toks) and (toks[pos][0] > indent or toks[pos][1].startswith("- ")):
                out[key] = node(toks[pos][0])
            else:
                out[key] = None
        return out

    return node(toks[0][0])


def readelf_metadata(readelf, image):
    out = subprocess.run([readelf, "--notes", image], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"llvm-readelf failed: {out.stderr}", file=sys.stderr)
        sys.exit(2)
    lines = out.stdout.splitlines()
    marks = [line.strip() for line in lines]
    # One note per object ld.lld linked: their kernels together are the code object's.
    merged, start = None, 0
    while "---" in marks[start:]:
        start = marks.index("---", start)
        end = marks.index("...", start)
        note = parse_yaml(lines[start + 1:end])
        if merged is None:
            merged = note
        else:
            merged["amdhsa.kernels"] = (merged.get("amdhsa.kernels") or []) + \
                (note.get("amdhsa.kernels") or [])
        start = end
    if merged is None:
        print(f"{image}: no AMDGPU metadata in llvm-readelf's output", file=sys.stderr)
        sys.exit(2)
    return merged


def explicit_args(args):
    """Arguments for devrt-run and the value each must have in the segment."""
    given, values = [], []
    for i, a in enumerate(args):
        if a[".value_kind"].startswith("hidden_"):
            continue
        if a[".value_kind"] == "global_buffer":
            given.append("buf:64")
            values.append(0)  # --explain has no device: buffers are null
        elif a[".size"] == 4:
            given.append(f"u32:{0x11223300 + i}")
            values.append(0x11223300 + i)
        elif a[".size"] == 8:
            given.append(f"u64:{0x0102030405060700 + i}")
            values.append(0x0102030405060700 + i)
        else:
            print(f"argument {i} of {a['.size']} bytes: no devrt type", file=sys.stderr)
            sys.exit(2)
    return given, values


def hidden_value(kind):
    """What each hidden argument must hold for GRID and BLOCK; None: not one devrt fills."""
    for axis, d in (("x", 0), ("y", 1), ("z", 2)):
        if kind == f"hidden_block_count_{axis}":
            return GRID[d]
        if kind == f"hidden_group_size_{axis}":
            return BLOCK[d]
        if kind in (f"hidden_remainder_{axis}", f"hidden_global_offset_{axis}"):
            return 0
    # The images checked here hold no ockl code: its hostcall buffer and heap are 0, as are
    # the arguments of device-side enqueue and multi-grid sync, which clr writes 0 too.
    return {"hidden_grid_dims": 3, "hidden_none": 0, "hidden_queue_ptr": 0,
            "hidden_hostcall_buffer": 0, "hidden_heap_v1": 0, "hidden_multigrid_sync_arg": 0,
            "hidden_default_queue": 0, "hidden_completion_action": 0}.get(kind)


def check_kernel(args, kernel, version, target):
    errors = []
    name = kernel[".name"]
    note_args = kernel.get(".args", [])
    given, values = explicit_args(note_args)
    command = [args.run, "--explain", args.image, name, "--target", target, "--json",
               "--grid", ",".join(map(str, GRID)), "--block", ",".join(map(str, BLOCK)),
               "--"] + given
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        return [f"{name}: devrt-run exited {out.returncode}: {out.stderr.strip()}"]
    d = json.loads(out.stdout)
    seg = bytes.fromhex(d["kernarg"])

    def expect(what, actual, wanted):
        if actual != wanted:
            errors.append(f"{name}: {what} is {actual}, llvm-readelf says {wanted}")

    expect("kernarg size", d["kernarg_size"], kernel[".kernarg_segment_size"])
    expect("kernarg bytes", len(seg), kernel[".kernarg_segment_size"])
    expect("kernarg align", d["kernarg_align"], kernel[".kernarg_segment_align"])
    expect("group segment", d["group_segment_size"], kernel[".group_segment_fixed_size"])
    dynamic = kernel.get(".uses_dynamic_stack", False)
    expect("private segment", d["private_segment_size"],
           kernel[".private_segment_fixed_size"] + (1024 if dynamic else 0))
    expect("code object version", d["code_object_version"], version)
    expect("grid size", d["grid_size"], [g * b for g, b in zip(GRID, BLOCK)])
    expect("workgroup size", d["workgroup_size"], list(BLOCK))
    expect("argument count", len(d["args"]), len(note_args))

    covered = bytearray(len(seg))
    explicit = iter(values)
    for i, (mine, note) in enumerate(zip(d["args"], note_args)):
        kind = note[".value_kind"]
        expect(f"argument {i} offset", mine["offset"], note[".offset"])
        expect(f"argument {i} size", mine["size"], note[".size"])
        expect(f"argument {i} kind", mine["kind"], kind)
        off, size = note[".offset"], note[".size"]
        if off + size > len(seg):
            errors.append(f"{name}: argument {i} ({kind}) lies past the segment")
            continue
        raw = int.from_bytes(seg[off:off + size], "little")
        wanted = next(explicit) if not kind.startswith("hidden_") else hidden_value(kind)
        if wanted is None:
            errors.append(f"{name}: argument {i} is {kind}, which devrt should have refused")
        elif raw != wanted:
            errors.append(f"{name}: argument {i} ({kind}) holds {raw:#x}, expected {wanted:#x}")
        for b in range(off, off + size):
            covered[b] = 1
    stray = [i for i, byte in enumerate(seg) if byte and not covered[i]]
    if stray:
        errors.append(f"{name}: bytes set outside every argument, at {stray[:8]}")
    return errors


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--readelf", required=True)
    p.add_argument("--run", required=True, help="devrt-run")
    p.add_argument("--image", required=True)
    p.add_argument("--oracle", help="read the note of this image instead (for the control)")
    p.add_argument("--target", required=True)
    p.add_argument("--version", type=int, required=True, help="code object version")
    args = p.parse_args()
    meta = readelf_metadata(args.readelf, args.oracle or args.image)
    kernels = meta.get("amdhsa.kernels") or []
    if not kernels:
        print(f"{args.image}: llvm-readelf lists no kernels", file=sys.stderr)
        return 2
    errors = []
    for kernel in kernels:
        errors += check_kernel(args, kernel, args.version, args.target)
    for e in errors:
        print(e)
    if not errors:
        print(f"{len(kernels)} kernels: every argument where llvm-readelf puts it")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
