#!/usr/bin/env bash
# Installs what devrt's build and tests need on a Debian 12 machine, and does nothing when
# everything is already there. Run as root (it uses apt-get); without root or network it
# stops and names the packages that are missing.
set -euo pipefail

llvm=${DEVRT_LLVM_VERSION:-19}
packages=(
    cmake ninja-build make gcc g++ python3 pkg-config
    dpkg-dev file       # cpack's Debian package (dpkg-shlibdeps), checked in CI
    "clang-$llvm" "lld-$llvm" "llvm-$llvm" "libclang-rt-$llvm-dev" # device code, sanitizers, fuzzers
    "clang-format-$llvm" # the one formatter version the sources follow (tests/style)
    "llvm-$llvm-dev"    # LLVM-C and libLLVM, for the JIT example (examples/jit)
    libhsa-runtime-dev  # HSA backend of the host runtime
    libamdhip64-dev     # HIP 5.2.3's headers: devrt_hip_attach, and its unit tests' fake HIP
    rocm-device-libs    # ROCm's ockl, the baseline of the cost report
    libelf-dev          # devrt-leaks and the runtime read ELF through elfutils
    libmsgpack-dev      # the runtime reads amdgcn code objects' metadata (msgpack-c)
    libamd-comgr-dev    # ROCm's comgr: the runtime reads code for loads of ockl's arguments
    libffi-dev          # the emulation backend calls kernels with any signature
    abigail-tools       # abidiff checks libdevrt's ABI against abi/libdevrt.abi (tests/abi)
)
# The other LLVMs devrt's bitcode is built with (tests/run-all.sh's llvm16 and llvm22 stages;
# README.md, "Building for your LLVM"): their compilers and tools, nothing else.
for other in ${DEVRT_OTHER_LLVM_VERSIONS-16 22}; do
    [[ $other == "$llvm" ]] || packages+=("clang-$other" "lld-$other" "llvm-$other")
done

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        exec sudo -n "$0" "$@"
    fi
    echo "devrt setup: missing packages: ${missing[*]}" >&2
    echo "devrt setup: run this script as root, or install them with apt-get" >&2
    exit 1
fi

echo "devrt setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update -qq || ! apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    echo "devrt setup: could not install: ${missing[*]} (no network or no Debian mirror?)" >&2
    exit 1
fi
