#!/usr/bin/env bash
# The whole test suite: the default build's tests (the package's among them: install,
# cpack, the examples built out of tree), the same sources built once more with Unix
# Makefiles, the device bitcode and its codegen tests with LLVM 16 and with LLVM 22, then the emulation and unit tests again under AddressSanitizer with
# UndefinedBehaviorSanitizer, and under ThreadSanitizer.
#
# It ends with one table: each stage's tests passed, failed and skipped, as CTest counts
# them (from the JUnit report each test preset writes, build/<preset>/junit.xml), and the
# time it took. A stage that fails stops the suite, and the script exits with its status.
#
# --loaded runs it with the machine kept busy beside it, as a machine that runs other work
# is: $DEVRT_LOAD busy processes (default four a core), stopped when the suite ends. Every
# verdict must be the one an idle run gives (docs/reliability.md, "Under load").
set -euo pipefail
cd "$(dirname "$0")/.."

loaded=
case ${1:-} in
--loaded) loaded=1 ;;
"") ;;
*)
    echo "usage: tests/run-all.sh [--loaded]" >&2
    exit 2
    ;;
esac
# The busy processes of --loaded, each a shell loop named devrt-load-PID (this script's).
load_pids=()

# The table's rows, one a stage: name|result|passed|failed|skipped|seconds.
rows=()
# The stage under way, its folder in build/ and when it started.
stage=
stage_dir=
stage_start=

# row NAME RESULT COUNTS SECONDS, COUNTS as counts prints them
row() {
    rows+=("$1|$2|$3|$4")
}

# The counts of build/DIR/junit.xml as "passed|failed|skipped", "-|-|-" without one.
counts() {
    local report=build/$1/junit.xml counts
    if [[ -f $report ]] && counts=$(python3 tests/common/ctest_counts.py "$report"); then
        echo "${counts// /|}"
    else
        echo "-|-|-"
    fi
}

# run_stage NAME WORKFLOW DIR: the workflow preset, whose build (and tests) are in build/DIR.
run_stage() {
    stage=$1
    stage_dir=$3
    stage_start=$SECONDS
    rm -f "build/$3/junit.xml"
    cmake --workflow --preset "$2"
    row "$1" passed "$(counts "$3")" $((SECONDS - stage_start))
    stage=
}

duration() {
    if [[ $1 == - ]]; then
        echo -
    else
        printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
    fi
}

summary() {
    local status=$? name result passed failed skipped seconds line listed
    if [[ ${#load_pids[@]} -gt 0 ]]; then
        kill "${load_pids[@]}" 2>/dev/null || true
        wait "${load_pids[@]}" 2>/dev/null || true
    fi
    if [[ -n $stage ]]; then
        row "$stage" failed "$(counts "$stage_dir")" $((SECONDS - stage_start))
    fi
    for name in default makefiles llvm16 llvm22 asan tsan; do
        listed=
        for line in "${rows[@]}"; do
            if [[ ${line%%|*} == "$name" ]]; then
                listed=1
            fi
        done
        if [[ -z $listed ]]; then
            row "$name" "not run" "-|-|-" -
        fi
    done
    echo
    echo "run-all.sh: the stages"
    printf '%-10s %-8s %7s %7s %8s %7s\n' stage result passed failed skipped time
    for line in "${rows[@]}"; do
        IFS='|' read -r name result passed failed skipped seconds <<<"$line"
        printf '%-10s %-8s %7s %7s %8s %7s\n' "$name" "$result" "$passed" "$failed" "$skipped" \
            "$(duration "$seconds")"
    done
    if [[ -n $loaded ]]; then
        echo "run-all.sh: under load: ${#load_pids[@]} busy processes beside it"
    fi
    if [[ $status -eq 0 ]]; then
        echo "run-all.sh: passed"
    elif [[ -n $stage ]]; then
        echo "run-all.sh: the $stage stage failed (exit status $status)"
    else
        echo "run-all.sh: failed before any stage (exit status $status)"
    fi
    exit "$status"
}
trap summary EXIT

toolchain/setup.sh
if [[ -n $loaded ]]; then
    for ((i = 0; i < ${DEVRT_LOAD:-$(($(nproc) * 4))}; ++i)); do
        bash -c "exec -a devrt-load-$$ bash -c 'while :; do :; done'" &
        load_pids+=($!)
    done
fi
run_stage default test default
run_stage makefiles makefiles makefiles
# The device bitcode and its codegen tests with the other LLVMs consumers have (16: Julia
# 1.11; 22: the targets LLVM 19 lacks), not the whole suite (README.md).
run_stage llvm16 llvm16 llvm16
run_stage llvm22 llvm22 llvm22
if [[ -z ${DEVRT_SKIP_SANITIZERS:-} ]]; then
    run_stage asan asan asan
    run_stage tsan tsan tsan
else
    row asan skipped "-|-|-" -
    row tsan skipped "-|-|-" -
fi
