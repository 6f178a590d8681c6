#!/bin/sh
# readme_path.sh jit|lto CLANG LLVM_LINK OPT LLC LD_LLD BITCODE INCLUDE SOURCE WORK STEP RUN
#                KERNEL ARG...
# The README's JIT or LTO commands on SOURCE for gfx90a, then RUN --explain of KERNEL. STEP
# is what the test varies: for jit, opt's passes (internalize's list: KERNEL and
# __devrt_state); for lto, lld's LTO pipeline (empty: its own).
set -eu
path=$1 clang=$2 link=$3 opt=$4 llc=$5 lld=$6 bitcode=$7 include=$8 source=$9
work=${10} step=${11} run=${12} kernel=${13}
shift 13
mkdir -p "$work"
"$clang" -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -ffreestanding -O2 -I"$include" \
    -emit-llvm -c "$source" -o "$work/k.bc"
if [ "$path" = jit ]; then
    "$link" --only-needed "$work/k.bc" "$bitcode" -o "$work/linked.bc"
    "$opt" -passes="$step" -internalize-public-api-list="$kernel,__devrt_state" \
        "$work/linked.bc" -o "$work/optimized.bc"
    "$llc" -mtriple=amdgcn-amd-amdhsa -mcpu=gfx90a -filetype=obj "$work/optimized.bc" \
        -o "$work/k.o"
    "$lld" -shared "$work/k.o" -o "$work/k.hsaco"
else
    pipeline=
    [ -z "$step" ] || pipeline="--lto-newpm-passes=$step"
    "$clang" -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 -flto "$work/k.bc" \
        "$bitcode" ${pipeline:+-Xlinker "$pipeline"} -o "$work/k.hsaco"
fi
exec "$run" --explain "$work/k.hsaco" "$kernel" --target gfx90a "$@"
