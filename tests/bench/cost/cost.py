"""The cost report: what each devrt device function costs a kernel on every gfx target,
against ROCm's device libraries (ockl), and what linking either costs in compile time.

Each measured function has a kernel that calls it once (kernels/), compiled and linked the
way a JIT does (amdgcn.Toolchain.jit: llvm-link --only-needed, internalize, opt O3, llc,
ld.lld). Every figure is read from the code object the run produced: VGPRs, SGPRs and
scratch from the AMDGPU metadata note, instructions and code bytes from the symbol table
and the disassembly. Nothing is hard-coded.

    cost.py --build build/default                print the report (Markdown) to stdout
    cost.py --build build/default --update       rewrite the section of docs/performance.md
                                                 between <!-- cost:begin --> and
                                                 <!-- cost:end -->, and docs/performance/cost.svg
    cost.py --build build/default --check malloc --target gfx90a
                                                 one budget check (a CTest test, label codegen)
    cost.py --list-budgets                       KEY SYMBOL TARGET per line, for CMake

A function whose devrt symbol is not in the manifest yet (devrt-symbols.txt, or the
bitcode's own symbols) is skipped with a note, and appears once it exists.
"""
import argparse
import collections
import datetime
import html
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
KERNELS = os.path.join(HERE, "kernels")
sys.path.insert(0, os.path.join(ROOT, "tests", "codegen"))
import amdgcn  # noqa: E402

Measure = collections.namedtuple("Measure", "label symbol kernel ockl_label ockl_kernel")

# What is measured: key -> the row's label, the devrt symbol its kernel needs (None: no
# runtime), its kernel, and ROCm's equivalent (label and kernel) where there is one.
# A new device function gets a line here and a kernel in kernels/.
FUNCTIONS = collections.OrderedDict([
    ("baseline", Measure("(no call: the kernel's own work)", None, "baseline.c",
                         "(no call)", "baseline.c")),
    ("lane_id", Measure("devrt_lane_id", "devrt_lane_id", "lane_id.c",
                        "__ockl_lane_u32", "ockl_lane_u32.c")),
    ("active_lane_id", Measure("devrt_active_lane_id", "devrt_active_lane_id",
                               "active_lane_id.c",
                               "__ockl_activelane_u32", "ockl_activelane_u32.c")),
    ("wavefront_size", Measure("devrt_wavefront_size", "devrt_wavefront_size",
                               "wavefront_size.c", None, None)),
    ("ballot", Measure("devrt_ballot", "devrt_ballot", "ballot.c", None, None)),
    ("active_mask", Measure("devrt_active_mask", "devrt_active_mask", "active_mask.c",
                            None, None)),
    ("broadcast_first", Measure("devrt_broadcast_first", "devrt_broadcast_first",
                                "broadcast_first.c", None, None)),
    ("broadcast_first_u64", Measure("devrt_broadcast_first_u64", "devrt_broadcast_first_u64",
                                    "broadcast_first_u64.c", None, None)),
    ("workitem_id", Measure("devrt_workitem_id(X)", "devrt_workitem_id", "workitem_id.c",
                            "__ockl_get_local_id(0)", "ockl_get_local_id.c")),
    ("workgroup_id", Measure("devrt_workgroup_id(X)", "devrt_workgroup_id", "workgroup_id.c",
                             "__ockl_get_group_id(0)", "ockl_get_group_id.c")),
    ("workgroup_size", Measure("devrt_workgroup_size(X)", "devrt_workgroup_size",
                               "workgroup_size.c",
                               "__ockl_get_local_size(0)", "ockl_get_local_size.c")),
    ("num_workgroups", Measure("devrt_num_workgroups(X)", "devrt_num_workgroups",
                               "num_workgroups.c",
                               "__ockl_get_num_groups(0)", "ockl_get_num_groups.c")),
    ("grid_size", Measure("devrt_grid_size(X)", "devrt_grid_size", "grid_size.c",
                          "__ockl_get_global_size(0)", "ockl_get_global_size.c")),
    ("global_id", Measure("devrt_global_id(X)", "devrt_global_id", "global_id.c",
                          "__ockl_get_global_id(0)", "ockl_get_global_id.c")),
    ("barrier", Measure("devrt_barrier", "devrt_barrier", "barrier.c", None, None)),
    ("kernel_state", Measure("devrt_kernel_state", "devrt_kernel_state", "kernel_state.c",
                             None, None)),
    ("signal_exception", Measure("devrt_signal_exception", "devrt_signal_exception",
                                 "signal_exception.c", None, None)),
    ("signal_exception_code", Measure("devrt_signal_exception_code",
                                      "devrt_signal_exception_code",
                                      "signal_exception_code.c", None, None)),
    ("throw", Measure("DEVRT_THROW", "devrt_signal_exception_at", "throw.c", None, None)),
    ("malloc", Measure("devrt_malloc(n)", "devrt_malloc", "malloc.c",
                       "__ockl_dm_alloc(n)", "ockl_dm_alloc.c")),
    ("malloc_64", Measure("devrt_malloc(64)", "devrt_malloc", "malloc_64.c",
                          "__ockl_dm_alloc(64)", "ockl_dm_alloc_64.c")),
    ("free", Measure("devrt_free", "devrt_free", "free.c",
                     "__ockl_dm_dealloc", "ockl_dm_dealloc.c")),
    ("printf", Measure('devrt_printf("%d %f %s\\n", i, x, s)', "devrt_printf", "printf.c",
                       "__ockl_printf_begin/_append_string_n/_append_args",
                       "ockl_printf.c")),
])

# Budgets the codegen tests hold these functions to: at most this many VGPRs for the whole
# kernel that calls the function once, and no scratch, on BUDGET_TARGETS.
BUDGETS = collections.OrderedDict([("malloc", 32), ("malloc_64", 32), ("free", 16),
                                   ("printf", 24)])
BUDGET_TARGETS = ("gfx90a", "gfx1030", "gfx1100")
# Functions held to ROCm's equivalent: at most this many times ockl's instruction count, on
# the targets of TARGETS that the installed ockl supports.
RATIOS = collections.OrderedDict([("num_workgroups", 1.2)])
RATIO_TARGETS = ("gfx900", "gfx90a", "gfx1030")
# What one LLVM's bitcode cannot meet, each with its reason (docs/llvm-versions.md); every
# other budget holds on every LLVM. {(llvm, key, target or None for all): (limit, why)}
LLVM_LIMITS = {
    (22, "malloc", "gfx90a"): (34, "LLVM 22 allocates 34 VGPRs to devrt_malloc on gfx90a, "
                               "where LLVM 19 meets 32 (measured, cause not analysed; on "
                               "gfx1030 and gfx1100 LLVM 22 meets 32)"),
    (16, "num_workgroups", None): (3.0, "LLVM 16 defines no __oclc_ABI_version, so the bitcode "
                                        "divides the packet's grid on every code object version"),
    (22, "num_workgroups", None): (3.0, "LLVM 22 no longer defines __oclc_ABI_version, so the "
                                        "bitcode divides the packet's grid on every code object "
                                        "version"),
}


def limit(report, key, cpu):
    """BUDGETS[key] or RATIOS[key], or this LLVM's own limit where LLVM_LIMITS has one
    (printed with its reason)."""
    major = report.tc.llvm_major()
    for target in (cpu, None):
        if (major, key, target) in LLVM_LIMITS:
            value, why = LLVM_LIMITS[(major, key, target)]
            print(f"LLVM {major}'s limit for {key}: {value} ({why})")
            return value
    return RATIOS[key] if key in RATIOS else BUDGETS[key]

TARGETS = ("gfx900", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201")
# Compile latency: these pairs, on this target (one that ockl supports).
LATENCY = ("baseline", "lane_id", "malloc", "printf")
LATENCY_TARGET = "gfx90a"

METRICS = (("vgpr", "VGPRs"), ("sgpr", "SGPRs"), ("scratch", "scratch (B)"),
           ("instructions", "instructions"), ("bytes", "code (B)"))
BEGIN, END = "<!-- cost:begin -->", "<!-- cost:end -->"


class Skip(Exception):
    pass


class Report:
    def __init__(self, args):
        self.args = args
        self.tc = amdgcn.Toolchain(args.llvm_bin, args.include, args.bitcode)
        self.tmp = amdgcn.workdir()
        self.manifest = read_manifest(args.manifest) if args.manifest else None
        self.in_bitcode = {s for s in self.tc.defined_symbols(args.bitcode)}
        self.errors = []

    def devrt_missing(self, m):
        """Why M cannot be measured against devrt yet, or None."""
        if m.symbol is None:
            return None
        if self.manifest is not None and m.symbol not in self.manifest:
            return f"`{m.symbol}` is not in the manifest yet"
        if m.symbol not in self.in_bitcode:
            return f"`{m.symbol}` is not in {os.path.basename(self.args.bitcode)} yet"
        return None

    def libraries(self, side, cpu):
        if side == "devrt":
            return [self.args.bitcode]
        return amdgcn.rocm_device_libs(cpu, directory=self.args.rocm_bitcode)

    def measure(self, key, side, cpu):
        """The cost figures of FUNCTIONS[key] on CPU, side 'devrt' or 'ockl'."""
        m = FUNCTIONS[key]
        kernel = m.kernel if side == "devrt" else m.ockl_kernel
        stem = os.path.join(self.tmp, f"{side}.{key}.{cpu}")
        bc = self.tc.compile(os.path.join(KERNELS, kernel), cpu, stem, flags=("-I", KERNELS))
        co = self.tc.jit(bc, cpu, stem, self.libraries(side, cpu))
        meta = self.tc.metadata(co)
        if len(meta) != 1:
            raise amdgcn.BuildError(f"{kernel}: expected one kernel, found {sorted(meta)}")
        (figures,) = meta.values()
        figures = dict(figures)
        figures["instructions"], figures["bytes"] = self.tc.code_size(co, cpu)
        return figures

    def try_measure(self, key, side, cpu):
        try:
            return self.measure(key, side, cpu)
        except amdgcn.BuildError as e:
            first = str(e).strip().splitlines()
            self.errors.append(f"{side} {key} {cpu}: {e}")
            return {"error": first[-1] if first else "build failed"}

    def collect(self):
        self.devrt, self.ockl, self.notes = {}, {}, []
        self.ockl_targets = [t for t in self.args.targets if self.libraries("ockl", t)]
        for key, m in FUNCTIONS.items():
            why = self.devrt_missing(m)
            if why:
                self.notes.append(f"{m.label}: skipped, {why}.")
            for cpu in self.args.targets:
                if not why:
                    self.devrt[key, cpu] = self.try_measure(key, "devrt", cpu)
                if m.ockl_kernel and cpu in self.ockl_targets:
                    self.ockl[key, cpu] = self.try_measure(key, "ockl", cpu)
            print(f"measured {key}", file=sys.stderr)
        if self.manifest is not None:
            measured = {m.symbol for m in FUNCTIONS.values()}
            for symbol in self.manifest:
                if symbol not in measured and not symbol.startswith("__"):
                    self.notes.append(f"`{symbol}` is in the manifest but has no cost kernel "
                                      "here: add it to FUNCTIONS in cost.py.")
        self.latency = self.compile_latency()

    def compile_latency(self):
        """Median seconds of link, opt, llc and lld for each LATENCY pair, runs interleaved
        so that the machine's drift touches both sides alike."""
        cpu = LATENCY_TARGET
        if not self.libraries("ockl", cpu):
            return []
        rows = []
        for key in LATENCY:
            m = FUNCTIONS[key]
            sides = {}
            for side in ("devrt", "ockl") if not self.devrt_missing(m) else ("ockl",):
                kernel = m.kernel if side == "devrt" else m.ockl_kernel
                stem = os.path.join(self.tmp, f"latency.{side}.{key}")
                bc = self.tc.compile(os.path.join(KERNELS, kernel), cpu, stem,
                                     flags=("-I", KERNELS))
                sides[side] = (bc, stem, [])
            for _ in range(self.args.runs):
                for side, (bc, stem, runs) in sides.items():
                    timings = {}
                    self.tc.jit(bc, cpu, stem, self.libraries(side, cpu), timings=timings)
                    runs.append(timings)
            rows.append((key, {side: {step: statistics.median(r[step] for r in runs)
                                      for step in ("link", "opt", "llc", "lld")}
                               for side, (_, _, runs) in sides.items()}))
            print(f"timed {key}", file=sys.stderr)
        return rows

    # --- Markdown ---------------------------------------------------------------------

    def markdown(self, svg_link):
        a = self.args
        out = []
        w = out.append
        w(f"Generated by `cmake --build {a.build_hint} --target cost-report` "
          f"(which runs `python3 tests/bench/cost/cost.py --build {a.build_hint} --update`) "
          f"on {a.date}.")
        w("")
        w(f"- Machine: {machine()}")
        w(f"- Compiler: {first_line(self.tc.run(self.tc.tool('clang'), '--version'))} "
          f"(`{a.llvm_bin}`)")
        w(f"- devrt: `{os.path.relpath(a.bitcode, ROOT)}`; ROCm device libraries: "
          f"{rocm_version()} (`{a.rocm_bitcode}`), which support "
          f"{', '.join(self.ockl_targets) or 'none'} of the targets below")
        w("- Each kernel calls one function once and stores its result; it is linked the "
          "way a JIT does: `llvm-link --only-needed kernel.bc LIBRARIES`, internalize all "
          "but the kernel, `opt -O3`, `llc -O3`, `ld.lld`. ockl is linked with its control "
          "libraries as a compiler does: `ockl.bc oclc_isa_version_N.bc "
          "oclc_abi_version_500.bc oclc_wavefrontsize64_{on,off}.bc` and daz_opt, "
          "finite_only, unsafe_math, correctly_rounded_sqrt off.")
        w("- VGPRs, SGPRs and scratch are the whole kernel's, from the code object's "
          "metadata note; instructions and code bytes count the kernel and every function "
          "it calls that was not inlined (FUNC symbols of the code object), padding "
          "excluded. The first row is the kernel with no call, for reference.")
        w("")
        w(f"![VGPRs per kernel, and devrt against ockl]({svg_link})")
        w("")
        w("### What each devrt function costs a kernel")
        for cpu in a.targets:
            w("")
            w(f"#### {cpu} (wave{amdgcn.TARGETS[cpu]})")
            w("")
            w("| function | " + " | ".join(h for _, h in METRICS) + " |")
            w("| --- |" + " ---: |" * len(METRICS))
            for key, m in FUNCTIONS.items():
                f = self.devrt.get((key, cpu))
                if f is None:
                    continue
                w(f"| {md(m.label)} | " + " | ".join(cell(f, k) for k, _ in METRICS) + " |")
        if self.notes:
            w("")
            for note in self.notes:
                w(f"- {note}")
        w("")
        w("### devrt against ROCm's device libraries")
        w("")
        w("devrt / ockl (ratio devrt ÷ ockl) for the same kernel, on the targets the "
          "installed ockl supports. A devrt function not built yet shows ockl's figures "
          "alone: they are the bar to beat.")
        w("")
        w("| devrt | ockl | target | " + " | ".join(h for _, h in METRICS) + " |")
        w("| --- | --- | --- |" + " ---: |" * len(METRICS))
        for key, m in FUNCTIONS.items():
            if not m.ockl_kernel:
                continue
            for cpu in self.ockl_targets:
                o = self.ockl.get((key, cpu))
                d = self.devrt.get((key, cpu))
                label = md(m.label) if d is not None else f"{md(m.label)} (not built yet)"
                w(f"| {label} | {md(m.ockl_label)} | {cpu} | " +
                  " | ".join(pair(d, o, k) for k, _ in METRICS) + " |")
        missing = [t for t in a.targets if t not in self.ockl_targets]
        if missing:
            w("")
            w(f"The installed ockl has no `oclc_isa_version` library for {', '.join(missing)}: "
              "no comparison there.")
        w("")
        w("### Compile latency")
        w("")
        if not self.latency:
            w(f"Not measured: ockl does not support {LATENCY_TARGET} here.")
        else:
            w(f"Seconds to link, optimize, generate code and link the code object for one "
              f"small kernel on {LATENCY_TARGET} (the front end's compile of the kernel is "
              f"the same for both and not counted): median of {a.runs} runs, devrt and ockl "
              "runs interleaved. ockl's side links `ockl.bc` and its control libraries.")
            w("")
            w("| kernel | link devrt / ockl | opt devrt / ockl | llc + lld devrt / ockl | "
              "total devrt / ockl | ratio |")
            w("| --- | ---: | ---: | ---: | ---: | ---: |")
            for key, t in self.latency:
                m = FUNCTIONS[key]
                steps = {side: {"link": t[side]["link"], "opt": t[side]["opt"],
                                "codegen": t[side]["llc"] + t[side]["lld"],
                                "total": sum(t[side].values())} for side in t}
                d, o = steps.get("devrt"), steps["ockl"]
                label = md(m.label) if d else f"{md(m.label)} (not built yet)"
                row = [f"{d[k]:.3f} / {o[k]:.3f}" if d else f"– / {o[k]:.3f}"
                       for k in ("link", "opt", "codegen", "total")]
                ratio = f"{d['total'] / o['total']:.2f}×" if d else "–"
                w(f"| {label} vs {md(m.ockl_label)} | " + " | ".join(row) + f" | {ratio} |")
        if self.errors:
            w("")
            w("Builds that failed:")
            w("")
            for e in self.errors:
                w(f"- {md(first_line(e))}")
        return "\n".join(out) + "\n"

    # --- SVG --------------------------------------------------------------------------

    def svg(self):
        """Two panels of horizontal bars: VGPRs of each devrt kernel on each target; and
        devrt against ockl, VGPRs, on the targets ockl supports. Scratch is written next
        to a bar that has any."""
        targets = self.args.targets
        palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1",
                   "#edc948", "#9c755f"]
        colors = {t: palette[i % len(palette)] for i, t in enumerate(targets)}
        panel1 = []
        for key, m in FUNCTIONS.items():
            bars = [(t, self.devrt.get((key, t))) for t in targets]
            bars = [(t, f) for t, f in bars if f and "error" not in f]
            if bars:
                panel1.append((m.label, [(colors[t], f["vgpr"], f["scratch"]) for t, f in bars]))
        panel2 = []
        side_colors = {"devrt": "#4e79a7", "ockl": "#e15759"}
        for key, m in FUNCTIONS.items():
            if not m.ockl_kernel or key == "baseline":
                continue
            for t in self.ockl_targets:
                bars = []
                for side, table in (("devrt", self.devrt), ("ockl", self.ockl)):
                    f = table.get((key, t))
                    if f and "error" not in f:
                        bars.append((side_colors[side], f["vgpr"], f["scratch"]))
                if bars:
                    only = "" if (key, t) in self.devrt else " (ockl only)"
                    panel2.append((f"{m.label} · {t}{only}", bars))
        width, label_w, bar_h, gap = 1000, 360, 9, 8
        plot_w = width - label_w - 140
        parts, y = [], 30

        def text(x, y, s, size=12, anchor="start", weight="normal"):
            parts.append(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" '
                         f'font-weight="{weight}">{html.escape(str(s))}</text>')

        def panel(title, groups, legend):
            nonlocal y
            text(10, y, title, 14, weight="bold")
            y += 18
            x = 10
            for name, color in legend:
                parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" '
                             f'fill="{color}"/>')
                text(x + 14, y, name, 11)
                x += 24 + 7 * len(name)
            y += 14
            top = max([v for _, bars in groups for _, v, _ in bars] + [1])
            scale = plot_w / top
            for label, bars in groups:
                h = len(bars) * bar_h
                text(label_w - 8, y + h / 2 + 4, label, 11, "end")
                for color, v, scratch in bars:
                    parts.append(f'<rect x="{label_w}" y="{y}" width="{max(v * scale, 0.5):.1f}" '
                                 f'height="{bar_h - 1}" fill="{color}"/>')
                    note = f"{v}" + (f"  +{scratch} B scratch" if scratch else "")
                    text(label_w + v * scale + 4, y + bar_h - 1, note, 9)
                    y += bar_h
                y += gap
            y += 20

        panel("VGPRs of a kernel calling one devrt function, by target", panel1,
              [(t, colors[t]) for t in targets])
        if panel2:
            panel("devrt against ROCm ockl: VGPRs of the same kernel", panel2,
                  list(side_colors.items()))
        text(10, y, f"Generated by tests/bench/cost/cost.py on {self.args.date}; "
             "figures read from the code objects.", 10)
        y += 10
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
                f'viewBox="0 0 {width} {y}" font-family="sans-serif">\n'
                f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(parts) +
                "\n</svg>\n")


def cell(f, key):
    if "error" in f:
        return "build failed" if key == "vgpr" else "–"
    value = f[key]
    if key == "scratch" and f.get("dynamic_stack"):
        return f"{value} + dynamic"
    return str(value)


def pair(d, o, key):
    if o is None or "error" in o:
        return "–"
    if d is None:
        return f"– / {cell(o, key)}"
    if "error" in d:
        return f"failed / {cell(o, key)}"
    ratio = f" ({d[key] / o[key]:.2f}×)" if o[key] else ""
    return f"{cell(d, key)} / {cell(o, key)}{ratio}"


def md(s):
    return s.replace("|", "\\|").replace("*", "\\*")


def first_line(s):
    return (s.strip().splitlines() or [""])[0]


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            cpu = m.group(1) if m else cpu
    except OSError:
        pass
    system = platform.system()
    try:
        with open("/etc/os-release") as f:
            m = re.search(r'^PRETTY_NAME="?([^"\n]+)', f.read(), re.M)
            system = m.group(1) if m else system
    except OSError:
        pass
    load = ", load average {:.2f}".format(os.getloadavg()[0]) if hasattr(os, "getloadavg") else ""
    return f"{cpu}, {len(os.sched_getaffinity(0))} cores available{load}; {system}"


def rocm_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "rocm-device-libs"],
                             capture_output=True, text=True)
        if out.returncode == 0 and out.stdout:
            return f"rocm-device-libs {out.stdout.strip()}"
    except OSError:
        pass
    return "rocm-device-libs (version unknown)"


def read_manifest(path):
    with open(path) as f:
        return {line.strip() for line in f if line.strip()}


def cmake_cache(build, name):
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            m = re.search(rf"^{name}:[A-Z]+=(.*)$", f.read(), re.M)
            return m.group(1) if m else None
    except OSError:
        return None


def rewrite_section(doc, section):
    text = open(doc).read() if os.path.exists(doc) else "# Performance\n"
    block = f"{BEGIN}\n{section}{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n## Cost on AMDGPU\n\n{block}\n"
    with open(doc, "w") as f:
        f.write(text)


def check_ratio(report, key, cpu):
    """RATIOS[key] on CPU: at most that many times ockl's instructions, no scratch."""
    m = FUNCTIONS[key]
    if not report.libraries("ockl", cpu):
        return f"the installed ROCm device libraries do not support {cpu}: nothing to compare"
    f = report.measure(key, "devrt", cpu)
    o = report.measure(key, "ockl", cpu)
    print(f"{cpu} {m.label}: {f['instructions']} instructions, {f['vgpr']} VGPRs; "
          f"{m.ockl_label}: {o['instructions']} instructions, {o['vgpr']} VGPRs")
    if f["scratch"] or f["dynamic_stack"]:
        return f"{m.label} uses {f['scratch']} B of scratch, budget 0"
    ratio = limit(report, key, cpu)
    if f["instructions"] > ratio * o["instructions"]:
        return (f"{m.label} takes {f['instructions']} instructions, more than {ratio} x "
                f"{m.ockl_label}'s {o['instructions']}")
    return None


def check(report, key, cpu):
    """The budget of BUDGETS[key] on CPU: at most that many VGPRs, no scratch."""
    if key in RATIOS:
        return check_ratio(report, key, cpu)
    m = FUNCTIONS[key]
    why = report.devrt_missing(m)
    if why:
        return f"{why}: nothing to check"
    f = report.measure(key, "devrt", cpu)
    budget = limit(report, key, cpu)
    print(f"{cpu} {m.label}: {f['vgpr']} VGPRs (budget {budget}), {f['sgpr']} SGPRs, "
          f"{f['scratch']} B scratch, {f['instructions']} instructions, {f['bytes']} B")
    # ROCm's equivalent beside it, from the same run, where the installed ockl has one.
    if m.ockl_kernel and report.libraries("ockl", cpu):
        o = report.try_measure(key, "ockl", cpu)
        if "error" in o:
            print(f"{cpu} {m.ockl_label}: not measured ({o['error']})")
        else:
            print(f"{cpu} {m.ockl_label}: {o['vgpr']} VGPRs, {o['sgpr']} SGPRs, "
                  f"{o['scratch']} B scratch, {o['instructions']} instructions, {o['bytes']} B")
    elif m.ockl_kernel:
        print(f"{cpu} {m.ockl_label}: the installed ROCm device libraries do not support {cpu}")
    if f["scratch"] or f["dynamic_stack"]:
        return f"{m.label} uses {f['scratch']} B of scratch" + \
               (" and a dynamic stack" if f["dynamic_stack"] else "") + ", budget 0"
    if f["vgpr"] > budget:
        return f"{m.label} costs {f['vgpr']} VGPRs, budget {budget}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", help="a configured build directory: supplies --llvm-bin "
                        "(DEVRT_CLANG's directory), --bitcode and --manifest")
    parser.add_argument("--llvm-bin")
    parser.add_argument("--bitcode", help="devrt-amdgcn.bc")
    parser.add_argument("--manifest", help="devrt-symbols.txt (default: the bitcode's symbols)")
    parser.add_argument("--include", default=os.path.join(ROOT, "include"))
    parser.add_argument("--rocm-bitcode", default=amdgcn.ROCM_BITCODE)
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--runs", type=int, default=7, help="compile-latency runs")
    parser.add_argument("--update", action="store_true",
                        help="rewrite the section of --doc and write --svg")
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs", "performance.md"))
    parser.add_argument("--svg", default=os.path.join(ROOT, "docs", "performance", "cost.svg"))
    parser.add_argument("--check", choices=list(BUDGETS) + list(RATIOS),
                        help="check one budget and exit")
    parser.add_argument("--target", choices=amdgcn.TARGETS, help="the target of --check")
    parser.add_argument("--list-budgets", action="store_true")
    args = parser.parse_args()

    if args.list_budgets:
        for key in BUDGETS:
            for target in BUDGET_TARGETS:
                print(key, FUNCTIONS[key].symbol, target)
        for key in RATIOS:
            for target in RATIO_TARGETS:
                print(key, FUNCTIONS[key].symbol, target)
        return 0
    if args.build:
        build = os.path.abspath(args.build)
        clang = cmake_cache(build, "DEVRT_CLANG")
        args.llvm_bin = args.llvm_bin or (os.path.dirname(clang) if clang else None)
        args.bitcode = args.bitcode or os.path.join(build, "lib", "devrt", "devrt-amdgcn.bc")
        manifest = os.path.join(build, "devrt-symbols.txt")
        args.manifest = args.manifest or (manifest if os.path.exists(manifest) else None)
        args.build_hint = os.path.relpath(build, ROOT) if build.startswith(ROOT) else build
    else:
        args.build_hint = "build/default"
    args.llvm_bin = args.llvm_bin or "/usr/lib/llvm-19/bin"
    if not args.bitcode or not os.path.exists(args.bitcode):
        parser.error(f"no devrt bitcode (--bitcode or --build): {args.bitcode}")
    args.targets = [t for t in args.targets.split(",") if t]
    for t in args.targets:
        if t not in amdgcn.TARGETS:
            parser.error(f"unknown target {t}")
    args.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    report = Report(args)
    if args.check:
        if not args.target:
            parser.error("--check needs --target")
        try:
            failure = check(report, args.check, args.target)
        except amdgcn.BuildError as e:
            failure = f"build failed: {e}"
        if failure:
            print(f"FAIL cost {args.check} {args.target}: {failure}", file=sys.stderr)
            return 1
        return 0

    start = time.time()
    report.collect()
    svg_path = os.path.abspath(args.svg)
    doc_dir = os.path.dirname(os.path.abspath(args.doc))
    section = report.markdown(os.path.relpath(svg_path, doc_dir))
    if args.update:
        os.makedirs(os.path.dirname(svg_path), exist_ok=True)
        with open(svg_path, "w") as f:
            f.write(report.svg())
        rewrite_section(args.doc, section)
        print(f"wrote {args.doc} and {svg_path} in {time.time() - start:.0f} s", file=sys.stderr)
    else:
        sys.stdout.write(section)
    for e in report.errors:
        print(f"error: {e}", file=sys.stderr)
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
