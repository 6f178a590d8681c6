#!/bin/sh
# lto_path.sh CLANG BITCODE INCLUDE SOURCE WORK PIPELINE RUN KERNEL ARG...
# The README's LTO commands on SOURCE for gfx90a, lld's LTO running PIPELINE (empty: its
# own), then RUN --explain of the kernel.
set -eu
clang=$1 bitcode=$2 include=$3 source=$4 work=$5 pipeline=$6 run=$7 kernel=$8
shift 8
mkdir -p "$work"
"$clang" -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -ffreestanding -O2 -I"$include" \
    -emit-llvm -c "$source" -o "$work/k.bc"
if [ -n "$pipeline" ]; then
    "$clang" -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 -flto "$work/k.bc" "$bitcode" \
        -Xlinker --lto-newpm-passes="$pipeline" -o "$work/k.hsaco"
else
    "$clang" -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 -flto "$work/k.bc" "$bitcode" \
        -o "$work/k.hsaco"
fi
exec "$run" --explain "$work/k.hsaco" "$kernel" --target gfx90a "$@"
