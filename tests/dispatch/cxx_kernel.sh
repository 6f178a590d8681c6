#!/bin/sh
# cxx_kernel.sh CLANG LD_LLD BITCODE EMU_ARCHIVE INCLUDE SOURCE WORK RUN
# Builds the C++ kernel SOURCE (strict C++17) for the emulation and runs it with RUN
# (devrt-run), then for gfx90a with the bitcode and explains its dispatch.
set -eu
clang=$1 lld=$2 bitcode=$3 archive=$4 include=$5 source=$6 work=$7 run=$8
mkdir -p "$work"
flags="-std=c++17 -Wall -Wextra -pedantic -Werror -I$include"
"$clang" -x c++ $flags -shared -fPIC -fvisibility=hidden -DDEVRT_EMU "$source" -x none \
    "$archive" -o "$work/k.so"
"$run" "$work/k.so" scale --grid 1 --block 4 -- buf:16 u32:4
"$clang" -x c++ $flags -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -ffreestanding -O2 \
    -Xclang -mlink-builtin-bitcode -Xclang "$bitcode" -c "$source" -o "$work/k.o"
"$lld" -shared "$work/k.o" -o "$work/k.hsaco"
exec "$run" --explain "$work/k.hsaco" scale --target gfx90a -- buf:16 u32:4
