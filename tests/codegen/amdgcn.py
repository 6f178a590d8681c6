"""Builds kernels against devrt-amdgcn.bc the ways compilers do, and reads what they cost.

Shared by the codegen tests and the cost report (tests/bench/cost). Every cost figure is
read from the code object itself: the AMDGPU metadata note and the disassembly.
"""
import os
import re
import subprocess
import tempfile
import time

import gfx_targets

# Supported targets and their default wavefront size (device/arch/amdgcn_targets.txt).
TARGETS = {target: row["wave"] for target, row in gfx_targets.ROWS.items()}

LINK_PATHS = ("only-needed", "builtin-bitcode", "lto")

# EF_AMDGPU_MACH of each supported target (the table; host/codeobject/amdgpu_metadata.c).
ELF_MACHINES = {row["mach"]: target for target, row in gfx_targets.ROWS.items()}


def generic_flags(cpu):
    """Generic targets exist from code object version 6 on, which LLVM 19 and 20 do not
    make by default; to the compiler itself, as LLVM 19's driver warns of version 6."""
    return ["-Xclang", "-mcode-object-version=6"] if cpu.endswith("-generic") else []


class BuildError(Exception):
    pass


class Toolchain:
    def __init__(self, llvm_bin, include_dir, bitcode):
        self.bin = llvm_bin
        self.include = include_dir
        self.bitcode = bitcode

    def tool(self, name):
        return os.path.join(self.bin, name)

    def llvm_major(self):
        """The major version of the LLVM in self.bin, from clang --version."""
        out = self.run(self.tool("clang"), "--version")
        return int(re.search(r"version (\d+)\.", out).group(1))

    def run(self, *args):
        proc = subprocess.run([str(a) for a in args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"{' '.join(map(str, args))}\n{proc.stderr}")
        return proc.stdout

    def cflags(self, cpu, flags):
        return ["-target", "amdgcn-amd-amdhsa", "-nogpulib", "-ffreestanding", "-std=c17",
                f"-mcpu={cpu}", "-O2", "-I", self.include, *generic_flags(cpu), *flags]

    def build(self, source, cpu, workdir, path="only-needed", flags=(), library=True,
              keep=()):
        """Compile SOURCE for CPU, link devrt by PATH, and return the code object's path.

        The only-needed path is the JIT's: link the needed library functions into the
        kernel module, internalize all but the kernels and KEEP, optimize, generate code.
        """
        stem = os.path.join(workdir, f"{os.path.basename(source)}.{cpu}.{path}")
        obj, code_object = stem + ".o", stem + ".hsaco"
        cflags = self.cflags(cpu, flags)
        if not library or path == "only-needed":
            bc = stem + ".bc"
            self.run(self.tool("clang"), *cflags, "-emit-llvm", "-c", source, "-o", bc)
            if library:
                return self.jit(bc, cpu, stem, [self.bitcode], flags=flags, keep=keep)
            self.run(self.tool("llc"), "-O3", f"-mcpu={cpu}", *llc_flags(flags),
                     "-filetype=obj", bc, "-o", obj)
        elif path == "builtin-bitcode":
            self.run(self.tool("clang"), *cflags, "-Xclang", "-mlink-builtin-bitcode",
                     "-Xclang", self.bitcode, "-c", source, "-o", obj)
        elif path == "lto":
            bc = stem + ".bc"
            self.run(self.tool("clang"), *cflags, "-flto", "-c", source, "-o", bc)
            # LLVM 19's LTO pipeline leaves out the AMDGPU attributor, without which every
            # kernel asks for all of ROCm's hidden arguments (README, the LTO command).
            # LLVM 16 has it as no pass of its own to name, and its driver does not tell the
            # linker the processor, without which the library's functions are compiled for
            # none (no clock instruction, waves of 64).
            if self.llvm_major() < 17:
                lto = ["-Xlinker", "--lto-newpm-passes=lto<O2>", f"-Wl,-plugin-opt=mcpu={cpu}"]
            else:
                lto = ["-Xlinker", "--lto-newpm-passes=lto<O2>,amdgpu-attributor"]
            self.run(self.tool("clang"), "-target", "amdgcn-amd-amdhsa", "-nogpulib",
                     f"-mcpu={cpu}", "-O2", "-flto", *flags, bc, self.bitcode, *lto,
                     "-Wl,--no-undefined", "-o", code_object)
            return code_object
        else:
            raise ValueError(path)
        self.run(self.tool("ld.lld"), "-shared", "--no-undefined", obj, "-o", code_object)
        return code_object

    def compile(self, source, cpu, stem, flags=()):
        """Compile a C kernel to bitcode for CPU (the front end only); returns its path."""
        bc = stem + ".bc"
        self.run(self.tool("clang"), *self.cflags(cpu, flags), "-emit-llvm", "-c", source,
                 "-o", bc)
        return bc

    def jit(self, bc, cpu, stem, libraries, flags=(), keep=(), timings=None):
        """What a JIT does with a kernel module: link the needed functions of LIBRARIES
        (bitcode files, in order: each may use the ones after it), internalize all but the
        kernels and KEEP, optimize, generate code, link the code object. Returns its path.

        TIMINGS, a dict, receives the seconds each step took: link, opt, llc, lld.
        """
        linked, optimized = stem + ".linked.bc", stem + ".opt.bc"
        obj, code_object = stem + ".o", stem + ".hsaco"
        def call(step, *args):
            start = time.perf_counter()
            self.run(*args)
            if timings is not None:
                timings[step] = timings.get(step, 0.0) + time.perf_counter() - start
        call("link", self.tool("llvm-link"), "--only-needed", bc, *libraries, "-o", linked)
        kernels = self.kernel_names(linked)
        call("opt", self.tool("opt"), f"-mcpu={cpu}", *llc_flags(flags),
             "-passes=internalize,default<O3>",
             "-internalize-public-api-list=" + ",".join(kernels + list(keep)),
             linked, "-o", optimized)
        call("llc", self.tool("llc"), "-O3", f"-mcpu={cpu}", *llc_flags(flags),
             "-filetype=obj", optimized, "-o", obj)
        call("lld", self.tool("ld.lld"), "-shared", "--no-undefined", obj, "-o", code_object)
        return code_object

    def code_size(self, code_object, cpu):
        """(instructions, bytes) of the code object's functions: the kernels and every
        function they call that was not inlined, from the symbol table's FUNC sizes and
        the disassembly within them (the s_code_end/s_nop padding after them excluded)."""
        syms = self.run(self.tool("llvm-readelf"), "-s", "--wide", code_object)
        ranges = set()
        for line in syms.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] == "FUNC" and f[1] != "0000000000000000" and int(f[2], 0):
                start = int(f[1], 16)
                ranges.add((start, start + int(f[2], 0)))
        text = self.run(self.tool("llvm-objdump"), "-d", f"--mcpu={cpu}", code_object)
        count = 0
        for line in text.splitlines():
            m = re.match(r"\t\S.*//\s*([0-9A-Fa-f]+):", line)
            if m and any(a <= int(m.group(1), 16) < b for a, b in ranges):
                count += 1
        return count, sum(b - a for a, b in ranges)

    def defined_symbols(self, bitcode):
        """The symbols a bitcode file defines (llvm-nm)."""
        out = self.run(self.tool("llvm-nm"), "--defined-only", "--format=just-symbols", bitcode)
        return {line.strip() for line in out.splitlines() if line.strip()}

    def kernel_names(self, bitcode):
        text = self.run(self.tool("llvm-dis"), bitcode, "-o", "-")
        return re.findall(r"define [^@]*amdgpu_kernel [^@]*@([A-Za-z_0-9.]+)\(", text)

    def metadata(self, code_object):
        """Per-kernel resource figures from the AMDGPU metadata note."""
        notes = self.run(self.tool("llvm-readelf"), "--notes", code_object)
        kernels = {}
        for block in re.split(r"\n\s+- \.agpr_count:|\n  - ", notes):
            name = re.search(r"\.name:\s+(\S+)", block)
            if not name or ".symbol:" not in block:
                continue
            def field(key):
                m = re.search(rf"\.{key}:\s+(\d+)", block)
                return int(m.group(1)) if m else 0
            kernels[name.group(1)] = {
                "vgpr": field("vgpr_count"), "sgpr": field("sgpr_count"),
                "agpr": field("agpr_count"), "scratch": field("private_segment_fixed_size"),
                "dynamic_stack": "uses_dynamic_stack:    true" in block or
                                 ".uses_dynamic_stack: true" in block,
            }
        return kernels

    def instructions(self, code_object, cpu):
        """The disassembled instructions, one mnemonic-led string each."""
        text = self.run(self.tool("llvm-objdump"), "-d", f"--mcpu={cpu}", code_object)
        lines = (line.split("//")[0].strip() for line in text.splitlines()
                 if line.startswith("\t"))
        # s_code_end pads the end of .text; it is never executed.
        return [line for line in lines if line and not line.startswith("s_code_end")]

    def dynamic_symbols(self, code_object):
        out = self.run(self.tool("llvm-nm"), "-D", "--defined-only", code_object)
        return {line.split()[-1] for line in out.splitlines() if line.strip()}

    def symbol_visibility(self, code_object, name):
        """The visibility of NAME in the dynamic symbol table (PROTECTED, DEFAULT...)."""
        out = self.run(self.tool("llvm-readelf"), "--dyn-syms", "--wide", code_object)
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 8 and f[-1] == name:
                return f[5]
        return None

    def elf_target(self, code_object):
        """The gfx target the ELF header's flags name: as llvm-readelf names it, or, where
        it does not (LLVM 16's, for code objects of version 4 and later), by the machine
        number in the flags' low byte (EF_AMDGPU_MACH)."""
        out = self.run(self.tool("llvm-readelf"), "--file-headers", code_object)
        m = re.search(r"Flags:\s+0x[0-9A-Fa-f]+, (gfx[\w-]+)", out)
        if m:
            return m.group(1)
        m = re.search(r"Flags:\s+0x([0-9A-Fa-f]+)", out)
        return ELF_MACHINES.get(int(m.group(1), 16) & 0xff) if m else None

    def undefined_symbols(self, code_object):
        out = self.run(self.tool("llvm-nm"), "-u", code_object)
        return {line.split()[-1] for line in out.splitlines() if line.strip()}


def llc_flags(flags):
    """clang's -mwavefrontsize64 spelled for llc."""
    return ["-mattr=+wavefrontsize64"] if "-mwavefrontsize64" in flags else []


# ROCm's device libraries (ockl and its oclc control libraries), as Debian installs them.
ROCM_BITCODE = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"


def rocm_device_libs(cpu, wave=None, directory=ROCM_BITCODE):
    """The bitcode files a compiler links for ockl on CPU, in link order, or None when the
    package has no oclc_isa_version file for CPU. Controls as clang sets them by default
    for non-fast-math code: code object ABI 5, denormals kept, no finite-only or unsafe
    math, sqrt not forced to be correctly rounded."""
    isa = os.path.join(directory, f"oclc_isa_version_{cpu[3:]}.bc")
    if not os.path.exists(isa):
        return None
    wave = wave or TARGETS.get(cpu, 64)
    names = ["ockl.bc", isa, "oclc_abi_version_500.bc",
             f"oclc_wavefrontsize64_{'on' if wave == 64 else 'off'}.bc",
             "oclc_daz_opt_off.bc", "oclc_finite_only_off.bc", "oclc_unsafe_math_off.bc",
             "oclc_correctly_rounded_sqrt_off.bc"]
    return [os.path.join(directory, n) for n in names]


def workdir():
    return tempfile.mkdtemp(prefix="devrt-codegen-")
