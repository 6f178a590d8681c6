#!/bin/sh
# jit_path.sh CLANG LLVM_LINK OPT LLC LD_LLD BITCODE INCLUDE SOURCE WORK PASSES RUN KERNEL ARG...
# The README's "as a JIT does" commands on SOURCE for gfx90a, with opt running PASSES
# (internalize's list: KERNEL and __devrt_state), then RUN --explain of the kernel.
set -eu
clang=$1 link=$2 opt=$3 llc=$4 lld=$5 bitcode=$6 include=$7 source=$8 work=$9
passes=${10} run=${11} kernel=${12}
shift 12
mkdir -p "$work"
"$clang" -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -ffreestanding -O2 -I"$include" \
    -emit-llvm -c "$source" -o "$work/k.bc"
"$link" --only-needed "$work/k.bc" "$bitcode" -o "$work/linked.bc"
"$opt" -passes="$passes" -internalize-public-api-list="$kernel,__devrt_state" \
    "$work/linked.bc" -o "$work/optimized.bc"
"$llc" -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a -filetype=obj "$work/optimized.bc" -o "$work/k.o"
"$lld" -shared "$work/k.o" -o "$work/k.hsaco"
exec "$run" --explain "$work/k.hsaco" "$kernel" --target gfx90a "$@"
