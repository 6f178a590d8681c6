#!/bin/sh
# cxx_kernel.sh run|explain CLANG LD_LLD BITCODE EMU_ARCHIVE INCLUDE SOURCE WORK RUN
# Builds the C++ kernel SOURCE (strict C++17, no C casts: what the headers expand to must
# pass the warnings a strict C++ project turns on) for the emulation and runs it with RUN
# (devrt-run), or for gfx90a with the bitcode and explains its dispatch.
set -eu
mode=$1 clang=$2 lld=$3 bitcode=$4 archive=$5 include=$6 source=$7 work=$8 run=$9
mkdir -p "$work"
if [ "$mode" = run ]; then
    "$clang" -x c++ -std=c++17 -Wall -Wextra -pedantic -Wold-style-cast -Wmissing-variable-declarations -Werror -I"$include" -shared -fPIC \
        -fvisibility=hidden -DDEVRT_EMU "$source" -x none "$archive" -o "$work/k.so"
    exec "$run" "$work/k.so" scale --grid 1 --block 4 -- buf:16 u32:4
fi
"$clang" -x c++ -std=c++17 -Wall -Wextra -pedantic -Wold-style-cast -Wmissing-variable-declarations -Werror -I"$include" \
    -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -ffreestanding -O2 \
    -Xclang -mlink-builtin-bitcode -Xclang "$bitcode" -c "$source" -o "$work/k.o"
"$lld" -shared "$work/k.o" -o "$work/k.hsaco"
exec "$run" --explain "$work/k.hsaco" scale --target gfx90a -- buf:16 u32:4
