"""The codegen tests: one check, one target per invocation (see tests/codegen/CMakeLists.txt).

    check.py CHECK --target gfx90a --llvm-bin DIR --include DIR --bitcode devrt-amdgcn.bc
    check.py object --target gfx90a --llvm-bin DIR CODE_OBJECT...

`object` checks code objects made elsewhere (a JIT's: examples/jit) the way `link` checks
its own: for the target, nothing undefined, __devrt_state exported.

Exits 0 when the check holds and 1 with the reason when it does not.
"""
import argparse
import collections
import os
import sys

import amdgcn
import memory_model

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
DEVICE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "device")
EXCEPTION_VGPR_BUDGET = 8


def kernel(name):
    return os.path.join(KERNELS, name)


def code_object_failure(tc, co):
    """Why the host runtime could not use code object CO, or None: it must link (nothing
    undefined) and export __devrt_state, the state global the host looks up by name (a
    defined dynamic symbol, protected so that nothing preempts it)."""
    undefined = tc.undefined_symbols(co)
    if undefined:
        return f"undefined symbols {sorted(undefined)}"
    exported = tc.dynamic_symbols(co)
    if "__devrt_state" not in exported:
        return f"__devrt_state is not exported (exports: {sorted(exported)})"
    visibility = tc.symbol_visibility(co, "__devrt_state")
    if visibility != "PROTECTED":
        return f"__devrt_state is exported with {visibility} visibility, not PROTECTED"
    return None


def check_link(tc, cpu, tmp):
    """Every link path gives a code object with nothing undefined that exports the state."""
    for path in amdgcn.LINK_PATHS:
        co = tc.build(kernel("all_functions.c"), cpu, tmp, path=path)
        failure = code_object_failure(tc, co)
        if failure:
            return f"{path}: {failure}"
        print(f"{cpu} {path}: linked, exports {sorted(tc.dynamic_symbols(co))}")
    return None


def check_objects(tc, cpu, code_objects):
    """Code objects built elsewhere: for CPU, and as check_link wants its own."""
    for co in code_objects:
        target = tc.elf_target(co)
        if target != cpu:
            return f"{co}: the ELF header says {target}, not {cpu}"
        failure = code_object_failure(tc, co)
        if failure:
            return f"{co}: {failure}"
        print(f"{co}: {cpu}, linked, exports {sorted(tc.dynamic_symbols(co))}")
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


EXCEPTION_BODIES = ("global", "local")
EXCEPTION_FORMS = ("signal", "code", "throw", "at_value")


def check_exception(tc, cpu, tmp, defines=()):
    """Raising costs no scratch and at most EXCEPTION_VGPR_BUDGET VGPRs over the kernel's
    own: each raise form in each body of kernels/exception.c against the body without it,
    linked by every path. Prints every figure, then returns the first failure."""
    flags = tuple(f"-D{d}" for d in defines)
    failures, worst = [], 0
    for path in amdgcn.LINK_PATHS:
        kernels = tc.metadata(tc.build(kernel("exception.c"), cpu, tmp, path=path, flags=flags))
        figures = []
        for body in EXCEPTION_BODIES:
            base = kernels[f"{body}_none"]
            for form in EXCEPTION_FORMS:
                name = f"{body}_{form}"
                full = kernels[name]
                extra = full["vgpr"] - base["vgpr"]
                worst = max(worst, extra)
                figures.append(f"{name} {base['vgpr']}{extra:+d}")
                if full["scratch"] or full["dynamic_stack"]:
                    failures.append(f"{path}: {name}: the exception path uses scratch "
                                    f"({full['scratch']} bytes"
                                    f"{', a dynamic stack' if full['dynamic_stack'] else ''})")
                if extra > EXCEPTION_VGPR_BUDGET:
                    failures.append(f"{path}: {name}: the exception path costs {extra} VGPRs "
                                    f"({base['vgpr']} -> {full['vgpr']}), "
                                    f"budget {EXCEPTION_VGPR_BUDGET}")
        print(f"{cpu} {path}: VGPRs, the kernel's own and the raise's: {', '.join(figures)}")
    print(f"{cpu}: the exception path costs at most {worst:+d} VGPRs "
          f"(budget {EXCEPTION_VGPR_BUDGET}){'' if failures else ', no scratch'}")
    return failures[0] if failures else None


def check_memory_model(tc, cpu, tmp, defines=(), isa_only=False):
    """The RPC client's steps and the library's composed paths follow AMDGPUUsage's code
    sequences for system scope on CPU's ISA family (tests/codegen/memory_model.py)."""
    name, family = memory_model.family_of(cpu)
    print(f"{cpu}: family {name}; AMDGPUUsage, {family['table']}")
    flags = ("-I", DEVICE, *(f"-D{d}" for d in defines))
    steps = kernel("rpc_steps.c")
    if not isa_only:
        bc = tc.compile(steps, cpu, os.path.join(tmp, "rpc_steps"), flags=flags)
        wrong = memory_model.ir_scopes(tc.run(tc.tool("llvm-dis"), bc, "-o", "-"))
        if wrong:
            return f"the steps' atomics below system scope: {wrong}"
    code = memory_model.functions(tc, tc.build(steps, cpu, tmp, flags=flags, library=False), cpu)
    writebacks = {}
    for failure in (memory_model.check_hand_over(code["step_hand_over"], family, writebacks),
                    memory_model.check_doorbell(code["step_doorbell"], family, writebacks),
                    memory_model.check_reply(code["step_reply"], family),
                    memory_model.check_hand_back(code["step_hand_back"], family),
                    memory_model.check_post(code["step_post"], family)):
        if failure:
            return failure
    for source, kernel_name in (("rpc_echo.c", "rpc_echo"), ("heap_grow.c", "heap_grow")):
        composed = memory_model.functions(tc, tc.build(kernel(source), cpu, tmp), cpu)
        failure = memory_model.check_composed(kernel_name, composed[kernel_name], family)
        if failure:
            return failure
    if writebacks:
        print(f"  writebacks per step: {writebacks}")
    return None


# The bits of M0 that the kernel driver reads as the event id of an interrupt (s_sendmsg
# MSG_INTERRUPT), per gfx major: amdkfd's event interrupt handlers take 24 bits on gfx9,
# gfx11 and gfx12; ockl's update_mbox sends 23 on gfx10. Signal events have ids below
# amdkfd's KFD_SIGNAL_EVENT_LIMIT.
INTERRUPT_ID_BITS = {9: 24, 10: 23, 11: 24, 12: 24}
KFD_SIGNAL_EVENT_LIMIT = 4096


def gfx_major(cpu):
    """9 for gfx90a, 10 for gfx1030, 11 for gfx11-generic."""
    digits = cpu[3:].split("-")[0] if "generic" in cpu else cpu[3:-2]
    return int(digits)


def interrupt_masks(code):
    """The literal masks of M0 before each s_sendmsg sendmsg(MSG_INTERRUPT) in CODE (a list
    of instructions): the last `s_and_b32 m0, ..., MASK` before it, or None."""
    masks, last = [], None
    for text in code:
        words = text.replace(",", " ").split()
        if words[:2] == ["s_and_b32", "m0"]:
            literal = [w for w in words[2:] if w.startswith("0x") or w.isdigit()]
            last = int(literal[0], 0) if literal else None
        elif words[:2] == ["s_mov_b32", "m0"]:
            last = None
        elif text.startswith("s_sendmsg sendmsg(MSG_INTERRUPT)"):
            masks.append(last)
    return masks


def check_interrupt_id(tc, cpu, tmp, defines=()):
    """The doorbell's interrupt sends every signal event id whole, within the bits the
    family's interrupt carries: the doorbell step (kernels/rpc_steps.c, built from the
    device's header with DEFINES) and the library's composed echo."""
    width = INTERRUPT_ID_BITS[gfx_major(cpu)]
    field, needed = (1 << width) - 1, KFD_SIGNAL_EVENT_LIMIT - 1
    flags = ("-I", DEVICE, *(f"-D{d}" for d in defines))
    builds = (("rpc_steps", tc.build(kernel("rpc_steps.c"), cpu, tmp, flags=flags,
                                         library=False)),
              ("rpc_echo", tc.build(kernel("rpc_echo.c"), cpu, tmp)))
    for name, co in builds:
        masks = interrupt_masks(tc.instructions(co, cpu))
        if not masks:
            return f"{name}: no s_sendmsg sendmsg(MSG_INTERRUPT) found"
        for mask in masks:
            shown = "none" if mask is None else hex(mask)
            print(f"{cpu} {name}: event id mask {shown} (event ids below "
                  f"{KFD_SIGNAL_EVENT_LIMIT}, the interrupt carries {width} bits)")
            if mask is None:
                return f"{name}: M0 is not masked before the interrupt"
            if mask & needed != needed:
                return (f"{name}: the interrupt's event id mask {mask:#x} drops bits of ids "
                        f"below {KFD_SIGNAL_EVENT_LIMIT}")
            if mask & ~field:
                return f"{name}: the mask {mask:#x} exceeds the {width} bits gfx{gfx_major(cpu)} carries"
    return None


CHECKS = collections.OrderedDict(
    link=check_link, lane_id=check_lane_id, no_cost=check_no_cost, exception=check_exception,
    memory_model=check_memory_model, interrupt_id=check_interrupt_id)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=[*CHECKS, "object"])
    parser.add_argument("code_objects", nargs="*", metavar="CODE_OBJECT",
                        help="the code objects that `object` checks")
    parser.add_argument("--target", required=True, choices=amdgcn.TARGETS)
    parser.add_argument("--llvm-bin", required=True)
    parser.add_argument("--include")
    parser.add_argument("--bitcode")
    parser.add_argument("--define", action="append", default=[],
                        help="memory_model: a macro for the steps' build (a control build); "
                        "exception, interrupt_id: a macro for the kernels' build (a control)")
    parser.add_argument("--isa-only", action="store_true",
                        help="memory_model: read only the instructions, not the IR's scopes")
    args = parser.parse_intermixed_args()
    if args.check == "object" and not args.code_objects:
        parser.error("object needs the code objects to check")
    if args.check != "object" and not (args.include and args.bitcode):
        parser.error(f"{args.check} needs --include and --bitcode")
    tc = amdgcn.Toolchain(args.llvm_bin, args.include, args.bitcode)
    try:
        if args.check == "object":
            failure = check_objects(tc, args.target, args.code_objects)
        else:
            extra = {}
            if args.check == "memory_model":
                extra = {"defines": args.define, "isa_only": args.isa_only}
            elif args.check in ("exception", "interrupt_id"):
                extra = {"defines": args.define}
            failure = CHECKS[args.check](tc, args.target, amdgcn.workdir(), **extra)
    except amdgcn.BuildError as e:
        failure = f"{'cannot read' if args.check == 'object' else 'build failed'}: {e}"
    if failure:
        print(f"FAIL {args.check} {args.target}: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
