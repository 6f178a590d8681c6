#!/usr/bin/env python3
"""Lists the public names of devrt's installed headers, one "KIND NAME HEADER" a line.

The names come from the compilers, not from reading the text: clang's JSON syntax tree for
declarations (functions, enum constants, structs, enums, typedefs, variables) and the
preprocessor's -dD listing for macros, each attributed to the header that declares it. Each
header is read as C and C++, for the host and for the emulation (DEVRT_EMU), so that names
declared for one of them only are listed too.

Which names are public is decided here, per header (PUBLIC below): the user-facing headers
whole, less the helpers their macros are built from; from the layout headers the few names
users meet. Every installed header must be classified: one that is not is an error.

--kind host-functions lists only the functions libdevrt.so exports to programs (host.h,
attach.h, cuda.h, hip.h), the interface tests/abi checks. Exit status: 0, 1 a header
that does not parse or is not classified, 2 usage.
"""
import argparse
import json
import os
import re
import subprocess
import sys

# Helpers that the public macros are made of: named in the headers, used by no program.
HELPERS = re.compile(
    r"^(DEVRT_\w+_H"  # include guards
    r"|DEVRT_PRINTF_(?!MAX_)\w+|DEVRT_EMU_VALUE|DEVRT_EMU_DECLARE|DEVRT_EMU_LIST"
    r"|DEVRT_KERNEL_SIGNATURE"
    r"|devrt_printf_append_any|devrt_printf_state_here|__devrt_emu_enter_link"
    r"|DEVRT_ARG_OF|devrt_arg_of_\w+"
    r"|struct CUmod_st|struct ihipModule_t)$")  # the tags of CUDA's and HIP's own handles

# Header: None (every name it declares is public), or the public names of a layout header
# (a set of names, or an enum whose constants are all public). The layout headers describe
# memory that device code and the runtime share; docs/api.md names them.
ALL = None
PUBLIC = {
    "devrt.h": ALL,
    "symbols.def": ALL,
    "host.h": ALL,
    "attach.h": ALL,
    "cuda.h": ALL,
    "hip.h": ALL,
    "host_stubs.h": ALL,
    "abi.h": {"enum devrt_exception_code", "DEVRT_ABI_VERSION", "DEVRT_STATE_SYMBOL"},
    "output.h": {"DEVRT_OUTPUT_CONTEXT_RAW", "DEVRT_OUTPUT_CONTEXT_PRINTF",
                 "DEVRT_PRINTF_MAX_STRING", "DEVRT_PRINTF_MAX_ARGS"},
    "emu.h": set(),
    "heap.h": set(),
    "rpc.h": set(),
    "layout.h": set(),
    "shield.def": set(),
}
HOST_LIBRARY = {"host.h", "attach.h", "cuda.h", "hip.h"}

C = ["-x", "c", "-std=c17"]
VARIANTS = [
    C,
    ["-x", "c", "-std=c17", "-DDEVRT_EMU"],
    ["-x", "c++", "-std=c++17"],
    ["-x", "c++", "-std=c++17", "-DDEVRT_EMU"],
]
# Macros only, of devrt.h only: what it defines for GPU code.
GPU_VARIANTS = [
    ["-x", "c", "-std=c17", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-ffreestanding"],
    ["-x", "c", "-std=c17", "-target", "nvptx64-nvidia-cuda", "-nocudalib", "-ffreestanding"],
]


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"public_names: {' '.join(command)} failed:\n{result.stderr}")
    return result.stdout


def macros(clang, include, header, variant):
    """(name, file) for each #define the preprocessor reads while including HEADER."""
    text = run([clang, *variant, "-E", "-dD", "-I", include, header])
    current = None
    for line in text.splitlines():
        marker = re.match(r'^# \d+ "([^"]*)"', line)
        if marker:
            current = marker.group(1)
            continue
        define = re.match(r"^#define (\w+)", line)
        if define and current:
            yield define.group(1), current


def declarations(clang, include, header, variant):
    """(kind, name, file, node) for each declaration in clang's tree of HEADER."""
    tree = json.loads(run([clang, *variant, "-fsyntax-only", "-Xclang", "-ast-dump=json",
                           "-I", include, header]))
    # The dump names a location's file only where it differs from the one before, in the
    # order it writes them: follow every location in that order. A declaration made by a
    # macro is where the macro was expanded (symbols.def's lines, not devrt.h's).
    state = {"file": None}

    def follow(value):
        if isinstance(value, dict):
            if "file" in value:
                state["file"] = value["file"]
            for key, item in value.items():
                # includedFrom names the includer without moving the dump's current file
                if key not in ("inner", "includedFrom"):
                    follow(item)
        elif isinstance(value, list):
            for item in value:
                follow(item)

    def where(node):
        # a location written as spelling then expansion ends on the expansion's file
        follow(node.get("loc", {}))
        file = state["file"]
        follow(node.get("range", {}))
        return file

    def walk(node, top):
        kind = node.get("kind")
        file = where(node)
        name = node.get("name")
        if top and name and kind in ("FunctionDecl", "VarDecl", "TypedefDecl", "RecordDecl",
                                     "EnumDecl", "LinkageSpecDecl", "FunctionTemplateDecl",
                                     "CXXRecordDecl"):
            if kind in ("RecordDecl", "CXXRecordDecl"):
                yield "struct", f"struct {name}", file, node
            elif kind == "EnumDecl":
                yield "enum", f"enum {name}", file, node
            elif kind in ("FunctionDecl", "FunctionTemplateDecl"):
                yield "function", name, file, node
            elif kind == "VarDecl":
                yield "variable", name, file, node
            elif kind == "TypedefDecl":
                yield "typedef", name, file, node
        for child in node.get("inner", []):
            if kind == "EnumDecl" and child.get("kind") == "EnumConstantDecl":
                yield "constant", child["name"], where(child), dict(child, enum=name)
                continue
            # extern "C" { ... } holds top-level declarations
            yield from walk(child, top and kind in ("TranslationUnitDecl", "LinkageSpecDecl",
                                                    "EnumDecl"))

    yield from walk(tree, True)


def public_names(clang, include, kind_filter=None):
    headers = sorted(os.listdir(os.path.join(include, "devrt")))
    unclassified = [h for h in headers if h not in PUBLIC]
    if unclassified:
        sys.exit(f"public_names: not classified as public or layout: {', '.join(unclassified)}"
                 " (tests/api/public_names.py, PUBLIC)")
    found = {}
    host_only = kind_filter == "host-functions"
    for header in headers:
        if not header.endswith(".h") or (host_only and header not in HOST_LIBRARY):
            continue  # the .def manifests are read where devrt.h includes them
        path = os.path.join(include, "devrt", header)
        for variant in [C] if host_only else VARIANTS + (GPU_VARIANTS if header == "devrt.h" else []):
            for name, file in macros(clang, include, path, variant):
                found.setdefault((name, os.path.basename(file)), ("macro", None))
            if variant in GPU_VARIANTS:
                continue
            for kind, name, file, node in declarations(clang, include, path, variant):
                if file is None or not os.path.abspath(file).startswith(
                        os.path.abspath(include)):
                    continue
                key = (name, os.path.basename(file))
                if kind == "function" and (node.get("storageClass") == "static" or
                                           node.get("isImplicit")):
                    kind = "static-function"
                found.setdefault(key, (kind, node.get("enum") if kind == "constant" else None))
    names = []
    for (name, header), (kind, enum) in sorted(found.items(), key=lambda x: (x[0][1], x[0][0])):
        if header not in PUBLIC or HELPERS.match(name) or name.startswith("__"):
            continue
        chosen = PUBLIC[header]
        if chosen is not ALL and name not in chosen and f"enum {enum}" not in chosen:
            continue
        if kind_filter == "host-functions" and (kind != "function" or header not in HOST_LIBRARY):
            continue
        names.append(("function" if kind == "static-function" else kind, name, header))
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--include", required=True, help="the directory that holds devrt/")
    parser.add_argument("--clang", default="clang", help="clang, whose -ast-dump=json is read")
    parser.add_argument("--kind", choices=["all", "host-functions"], default="all")
    args = parser.parse_args()
    for kind, name, header in public_names(args.clang, args.include,
                                           None if args.kind == "all" else args.kind):
        print(kind, name, header, sep="\t")
    return 0


if __name__ == "__main__":
    sys.exit(main())
