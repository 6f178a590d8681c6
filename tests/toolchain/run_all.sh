#!/usr/bin/env bash
# run_all.sh CASE: tests/run-all.sh, copied with ctest_counts.py into a folder of its own,
# on fake stages (a cmake on PATH whose workflows print noise, write a JUnit report and exit
# with a given status). Each case expects its exit status and, as the output's last lines,
# its table (times left out):
#
#   pass            every stage passes: 0
#   fail-tests      the asan stage's tests fail (8): the suite stops there with 8, tsan not run
#   fail-build      the default stage fails before its tests (1), where a report of an earlier
#                   run lies: 1, and that report is not counted
#   no-sanitizers   DEVRT_SKIP_SANITIZERS=1: asan and tsan skipped, 0
#   loaded          --loaded with DEVRT_LOAD=3: every stage runs beside 3 busy processes,
#                   which are gone once the suite has ended: 0
#
# Exit status: 0 as expected, 1 not, 2 usage.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
case_=${1:-}
arguments=()
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/tests/common" "$root/toolchain" "$root/bin"
cp "$src/tests/run-all.sh" "$root/tests/"
cp "$src/tests/common/ctest_counts.py" "$root/tests/common/"
printf '#!/bin/sh\n' >"$root/toolchain/setup.sh"
# FAKE_<preset>: "STATUS [PASSED FAILED SKIPPED]", the workflow's exit status and the tests
# its report holds (none: the workflow stopped before its tests).
cat >"$root/bin/cmake" <<'FAKE'
#!/usr/bin/env bash
[[ $1 == --workflow && $2 == --preset ]] || exit 2
dir=$3
[[ $dir == test ]] && dir=default
var=FAKE_$3
read -r status passed failed skipped <<<"${!var}"
mkdir -p "build/$dir"
# --loaded: the stage runs beside FAKE_LOAD busy processes of its run-all.sh (its parent).
if [[ -n ${FAKE_LOAD:-} ]]; then
    echo "$PPID" >"$FAKE_LOAD_PID"
    load=$(pgrep -c -f "^devrt-load-$PPID " || true)
    [[ $load == "$FAKE_LOAD" ]] || { echo "$3: $load busy processes, expected $FAKE_LOAD"; exit 5; }
fi
seq 1 100 | sed "s/^/$3: a line of output /"
if [[ -n $passed ]]; then
    {
        echo '<?xml version="1.0" encoding="UTF-8"?>'
        echo '<testsuite name="fake">'
        for ((i = 0; i < passed; ++i)); do echo "<testcase name=\"p$i\" status=\"run\"/>"; done
        for ((i = 0; i < failed; ++i)); do
            echo "<testcase name=\"f$i\" status=\"fail\"><failure message=\"\"/></testcase>"
        done
        for ((i = 0; i < skipped; ++i)); do
            echo "<testcase name=\"s$i\" status=\"notrun\"><skipped message=\"SKIP_RETURN_CODE=77\"/></testcase>"
        done
        echo '</testsuite>'
    } >"build/$dir/junit.xml"
fi
exit "$status"
FAKE
chmod +x "$root/tests/run-all.sh" "$root/toolchain/setup.sh" "$root/bin/cmake"

export FAKE_test="0 5 0 2" FAKE_makefiles=0 FAKE_llvm16="0 4 0 0" FAKE_llvm22="0 6 0 0"
export FAKE_asan="0 3 0 0" FAKE_tsan="0 3 0 1"
header='
run-all.sh: the stages
stage      result    passed  failed  skipped    time'
case $case_ in
pass)
    expected_status=0
    expected="$header
default    passed         5       0        2 T
makefiles  passed         -       -        - T
llvm16     passed         4       0        0 T
llvm22     passed         6       0        0 T
asan       passed         3       0        0 T
tsan       passed         3       0        1 T
run-all.sh: passed"
    ;;
fail-tests)
    FAKE_asan="8 2 1 0"
    expected_status=8
    expected="$header
default    passed         5       0        2 T
makefiles  passed         -       -        - T
llvm16     passed         4       0        0 T
llvm22     passed         6       0        0 T
asan       failed         2       1        0 T
tsan       not run        -       -        -       -
run-all.sh: the asan stage failed (exit status 8)"
    ;;
fail-build)
    FAKE_test=1
    mkdir -p "$root/build/default"
    printf '<testsuite><testcase name="old" status="run"/></testsuite>\n' \
        >"$root/build/default/junit.xml"
    expected_status=1
    expected="$header
default    failed         -       -        - T
makefiles  not run        -       -        -       -
llvm16     not run        -       -        -       -
llvm22     not run        -       -        -       -
asan       not run        -       -        -       -
tsan       not run        -       -        -       -
run-all.sh: the default stage failed (exit status 1)"
    ;;
no-sanitizers)
    export DEVRT_SKIP_SANITIZERS=1
    expected_status=0
    expected="$header
default    passed         5       0        2 T
makefiles  passed         -       -        - T
llvm16     passed         4       0        0 T
llvm22     passed         6       0        0 T
asan       skipped        -       -        -       -
tsan       skipped        -       -        -       -
run-all.sh: passed"
    ;;
loaded)
    export DEVRT_LOAD=3 FAKE_LOAD=3 FAKE_LOAD_PID=$root/load_pid
    arguments=(--loaded)
    expected_status=0
    expected="$header
default    passed         5       0        2 T
makefiles  passed         -       -        - T
llvm16     passed         4       0        0 T
llvm22     passed         6       0        0 T
asan       passed         3       0        0 T
tsan       passed         3       0        1 T
run-all.sh: under load: 3 busy processes beside it
run-all.sh: passed"
    ;;
*)
    echo "usage: run_all.sh pass|fail-tests|fail-build|no-sanitizers|loaded" >&2
    exit 2
    ;;
esac

status=0
output=$(PATH="$root/bin:$PATH" "$root/tests/run-all.sh" "${arguments[@]}" 2>&1) || status=$?
if [[ -n ${FAKE_LOAD:-} ]] && pgrep -f "^devrt-load-$(cat "$FAKE_LOAD_PID") " >/dev/null; then
    echo "run_all.sh $case_: busy processes outlived the suite"
    exit 1
fi
lines=$(wc -l <<<"$expected")
tail=$(tail -n "$lines" <<<"$output" | sed -E 's/ +[0-9]+m[0-9]{2}s$/ T/')
if [[ $status -ne $expected_status || $tail != "$expected" ]]; then
    printf '%s\n' "$output" | tail -n 20
    echo "run_all.sh $case_: exit status $status (expected $expected_status); the output's last lines are above, expected:"
    printf '%s\n' "$expected"
    exit 1
fi
printf '%s\n' "$tail"
