#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (sm_70 or newer), its driver, the CUDA toolkit's headers
# and CMake: build the host side, run every test labelled nvptx, then the benchmarks
# (RPC latency and throughput; heap and printf against CUDA's), in one go.
#
#   tests/nvptx/run-on-gpu.sh [PTX_DIR [LOG_DIR]]
#
# PTX_DIR holds the PTX images prebuilt where LLVM 19 is (a GPU machine need not have it):
#
#   cmake --build build/default --target nvptx-ptx     # writes build/default/ptx/*.ptx
#
# With PTX_DIR the build here is host-only (DEVRT_DEVICE_CODE=OFF); without it, LLVM 19
# must be here too and the PTX is built. LOG_DIR (default: the build directory) receives
# gpu.txt, nvptx-tests.log, bench-rpc.log, bench-heap-printf.log, flood.log and results.md, the one file
# of the run for docs/results (the GPU, the commit, every test's result, the benchmarks' tables).
# The build directory
# is $DEVRT_GPU_BUILD, default build/nvptx-gpu; $DEVRT_GPU_JOBS parallel jobs (default: all
# cores); $DEVRT_GPU_TEST_TIMEOUT seconds at most per test and $DEVRT_GPU_BENCH_TIMEOUT per
# benchmark (default 300 each). Exits non-zero if a test failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
ptx=${1:-}
build=${DEVRT_GPU_BUILD:-$src/build/nvptx-gpu}
logs=${2:-$build}
mkdir -p "$build" "$logs"

config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [[ -n $ptx ]]; then
    config+=(-DDEVRT_DEVICE_CODE=OFF "-DDEVRT_PREBUILT_PTX_DIR=$(cd "$ptx" && pwd)")
fi
if command -v ninja >/dev/null; then
    config+=(-G Ninja)
fi

{
    date -u '+%Y-%m-%d %H:%M UTC'
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader
    nvcc --version 2>/dev/null | tail -1
    uname -srm
} >"$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"

cmake -S "$src" -B "$build" "${config[@]}" >"$logs/configure.log" 2>&1 ||
    { cat "$logs/configure.log"; exit 1; }
cmake --build "$build" -j "${DEVRT_GPU_JOBS:-$(nproc)}" >"$logs/build.log" 2>&1 ||
    { tail -50 "$logs/build.log"; exit 1; }

ctest --test-dir "$build" -L nvptx --output-on-failure --timeout "${DEVRT_GPU_TEST_TIMEOUT:-300}" 2>&1 |
    tee "$logs/nvptx-tests.log"
tests=${PIPESTATUS[0]}

# Each benchmark target exists where its PTX does.
for bench in bench-rpc-nvptx:bench-rpc bench-nvptx:bench-heap-printf; do
    target=${bench%%:*} log=${bench#*:}
    timeout "${DEVRT_GPU_BENCH_TIMEOUT:-300}" cmake --build "$build" --target "$target" 2>&1 |
        tee "$logs/$log.log"
done

# The flood figure: 2 GiB of 16 KiB lines from every thread into a callback (docs/output.md).
flood_ptx=$(cd "${ptx:-$build/ptx}" 2>/dev/null && pwd)
if [[ -f $flood_ptx/faults_kernels_nvptx.ptx ]]; then
    (cd "$build/tests/emu" && FLOOD_MIB=2048 timeout "${DEVRT_GPU_BENCH_TIMEOUT:-300}" \
        ./faults_test "$flood_ptx/faults_kernels_nvptx.ptx" flood cuda) 2>&1 |
        tee "$logs/flood.log"
fi

# One file for docs/results: what ran where, each test's line, and the benchmarks' tables.
{
    echo "# $(head -1 "$logs/gpu.txt"): tests/nvptx/run-on-gpu.sh"
    echo
    echo "Commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
        git -C "$src" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')."
    echo
    echo '```'
    tail -n +2 "$logs/gpu.txt"
    echo '```'
    echo
    echo "## Tests (exit $tests)"
    echo
    echo '```'
    grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|tests failed' "$logs/nvptx-tests.log"
    echo '```'
    for log in bench-rpc bench-heap-printf; do
        echo
        echo "## $log"
        echo
        grep -E '^\|' "$logs/$log.log" || echo "(no table: see $log.log)"
    done
    echo
    echo "## flood (FLOOD_MIB=2048 faults_test flood cuda)"
    echo
    grep -E 'lines, .* MiB in|FAIL' "$logs/flood.log" 2>/dev/null || echo "(no figure: see flood.log)"

} >"$logs/results.md"
exit "$tests"
