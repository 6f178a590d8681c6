#!/usr/bin/env bash
# On a machine with an AMD GPU (gfx9 to gfx12), ROCm's HSA runtime (libhsa-runtime64.so.1),
# LLVM 19 and CMake: build devrt with its device code, run every test labelled hardware,
# then the benchmarks through HSA (RPC, heap, printf, launch) and, where ROCm's hipcc is,
# the same heap and printf shapes through HIP (ockl's malloc, HIP's printf) in the same run;
# write a results file in the format of docs/results/. One command:
#
#   tests/hardware/run-on-gpu.sh [LOG_DIR]
#
# The hardware tests load the code object built for the GPU's own gfx target (every
# supported target is built); the first hour's risky scenarios run before them
# (first-hour.log). LOG_DIR (default: the build directory) receives gpu.txt, first-hour.log,
# hardware-tests.log, bench-*.log, hip-bench.log and results.md, the file to copy to
# docs/results/<date>-<gpu>.md. The build directory is $DEVRT_GPU_BUILD, default
# build/hardware-gpu; $DEVRT_GPU_JOBS parallel jobs (default: all cores);
# $DEVRT_GPU_TEST_TIMEOUT seconds at most per test and $DEVRT_GPU_BENCH_TIMEOUT per
# benchmark (default 300 each). Exits 1 if a test failed or none ran, 2 without an AMD GPU.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${DEVRT_GPU_BUILD:-$src/build/hardware-gpu}
logs=${1:-$build}

if [[ ! -e /dev/kfd ]]; then
    echo "run-on-gpu.sh: no /dev/kfd: this machine has no AMD GPU (or no amdgpu driver)" >&2
    exit 2
fi
mkdir -p "$build" "$logs"
rocm=${ROCM_PATH:-/opt/rocm}
{
    date -u '+%Y-%m-%d %H:%M UTC'
    "$rocm/bin/rocminfo" 2>/dev/null | grep -E '^ +(Marketing Name|Name): +gfx|Marketing Name' | head -4
    cat "$rocm/.info/version" 2>/dev/null
    uname -srm
} >"$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"

config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if command -v ninja >/dev/null; then
    config+=(-G Ninja)
fi
cmake -S "$src" -B "$build" "${config[@]}" >"$logs/configure.log" 2>&1 ||
    { cat "$logs/configure.log"; exit 1; }
cmake --build "$build" -j "${DEVRT_GPU_JOBS:-$(nproc)}" >"$logs/build.log" 2>&1 ||
    { tail -50 "$logs/build.log"; exit 1; }

# The first hour: the scenarios the HSA double can only model (docs/runtime.md, "What only
# hardware confirms"), riskiest first, each under `timeout` and each saying what it expects,
# with the kernel's log (dmesg) after it, in first-hour.log. A scenario that hangs is one the
# double was kinder than the hardware about: stop there and read its log before going on.
first_hour=0
risky() { # NAME EXPECTATION [VAR=VALUE]... : runs the hardware test NAME
    local name=$1 expect=$2
    shift 2
    echo "== $name${*:+ ($*)}: expected: $expect"
    env "$@" timeout 180 ctest --test-dir "$build" -R "^$name\$" --no-tests=error --output-on-failure
    local status=$?
    case $status in
    0) echo "== $name: as expected" ;;
    124) echo "== $name: HUNG (killed after 180 s): the double forgave what this GPU does not"; first_hour=1 ;;
    *) echo "== $name: NOT as expected (ctest exit $status)"; first_hour=1 ;;
    esac
    echo "-- dmesg after $name:"
    dmesg 2>/dev/null | tail -15 || echo "(dmesg not readable: run as root to see amdgpu's lines)"
}
{
    risky hardware.faults.device_lost "the fault's launch reports the device lost; opened again, the GPU is refused (amdkfd keeps the queues evicted)"
    risky hardware.faults.device_lost_second_gpu "with two GPUs: GPU 1's fault, which ROCr does not report, still ends its launch (devrt's probe), and GPU 1 is refused after; skipped with one GPU"
    risky hardware.faults.device_lost_trap "a kernel's s_trap fails its launch through the queue's error; the next launch runs"
    risky hardware.timeout.unload_runaway "an unload under a runaway stops it with its queue; later launches run"
    risky hardware.heap.full_occupancy "the heap served at full occupancy while the server allocates device memory"
    risky hardware.heap.full_occupancy "the same with copies as blit kernels, not SDMA" HSA_ENABLE_SDMA=0
} 2>&1 | tee "$logs/first-hour.log"

ctest --test-dir "$build" -L hardware --no-tests=error --output-on-failure --timeout "${DEVRT_GPU_TEST_TIMEOUT:-300}" 2>&1 |
    tee "$logs/hardware-tests.log"
tests=${PIPESTATUS[0]}
if [[ $first_hour -ne 0 ]]; then
    tests=1
fi
# Skipped is not passed: a run in which the GPU was not opened has tested nothing.
if grep -q 'Skipped' "$logs/hardware-tests.log"; then
    echo "run-on-gpu.sh: hardware tests were skipped: the HSA device did not open" >&2
    tests=1
fi

for bench in rpc heap printf launch; do
    timeout "${DEVRT_GPU_BENCH_TIMEOUT:-300}" cmake --build "$build" --target "bench-$bench-hardware" 2>&1 |
        tee "$logs/bench-$bench.log"
done

# The vendor's figures: HIP's device malloc and printf in the same shapes.
hipcc=${HIPCC:-$rocm/bin/hipcc}
if [[ -x $hipcc ]]; then
    "$hipcc" -O2 -o "$build/hip_bench" "$src/tests/hardware/hip_bench.hip" >"$logs/hip-build.log" 2>&1 &&
        timeout "${DEVRT_GPU_BENCH_TIMEOUT:-300}" "$build/hip_bench" 2>"$logs/hip-bench.log" >/dev/null
    cat "$logs/hip-bench.log"
else
    echo "no hipcc at $hipcc (set HIPCC): HIP's figures are missing" | tee "$logs/hip-bench.log"
fi

# The results file, in the form of docs/results/: what ran, where, and every table.
{
    echo "# $(head -2 "$logs/gpu.txt" | tail -1 | sed 's/^ *//'): hardware tests and benchmarks"
    echo
    echo "One run of \`tests/hardware/run-on-gpu.sh\` at $(git -C "$src" rev-parse --short HEAD 2>/dev/null):"
    echo
    echo '```'
    cat "$logs/gpu.txt"
    echo '```'
    echo
    echo "## The first hour (first-hour.log)"
    echo
    echo '```'
    grep '^== ' "$logs/first-hour.log"
    echo '```'
    echo
    echo "## Tests (\`ctest -L hardware\`)"
    echo
    echo '```'
    grep -E 'tests passed|tests failed|Failed|\*\*\*' "$logs/hardware-tests.log"
    echo '```'
    for bench in rpc heap printf launch; do
        echo
        echo "## devrt: bench-$bench-hardware"
        echo
        grep '^|' "$logs/bench-$bench.log"
    done
    echo
    echo "## HIP, the same shapes (tests/hardware/hip_bench.hip)"
    echo
    cat "$logs/hip-bench.log"
} >"$logs/results.md"
echo "run-on-gpu.sh: wrote $logs/results.md"
exit "$tests"
