#!/bin/sh
# run.sh CMAKE BUILD CASE [CMAKE ARGUMENTS]...: configures this project for CASE in a fresh
# BUILD with Ninja and exits with cmake's status. CMake wraps a long message over lines, so
# the output comes out as one line, which a pattern matches across the wrap; after a
# successful configure, the kernel compile commands the generator wrote follow, one a line.
set -u
cmake=$1 build=$2 case=$3
shift 3
rm -rf "$build"
out=$("$cmake" -S "$(dirname "$0")" -B "$build" -G Ninja "-DCASE=$case" "$@" 2>&1)
status=$?
printf '%s\n' "$out" | tr -s '\n ' '  '
echo
if [ "$status" -eq 0 ]; then
    grep -E -- '-target (amdgcn-amd-amdhsa|nvptx64-nvidia-cuda)' "$build/build.ninja"
fi
exit "$status"
