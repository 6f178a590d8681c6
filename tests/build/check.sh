#!/usr/bin/env bash
# Builds that do nothing when nothing changed (label build):
#
#   check.sh project  SOURCE BUILD GENERATOR TOUCH TARGET [-DVAR=VALUE...]
#       configure SOURCE into a fresh BUILD with GENERATOR ("Ninja" or "Unix Makefiles") and
#       build it; then a second build must have no work, and a configure with the same
#       options followed by a build must have none either. The control: after TOUCH (a file
#       the build reads) is touched, building TARGET ("all": everything) must have work,
#       which shows that the check sees work where there is some.
#   check.sh tree     WORK GENERATOR [-DVAR=VALUE...]
#       the same on devrt's own tree, built in WORK/tree-<generator> with the hardware
#       tests' kernels for gfx90a alone (the rest as in the default preset), and its first
#       build must print no warning; the control touches the symbol list that configure
#       writes (devrt-symbols.txt) and builds the amdgcn bitcode, which is linked from it.
#   check.sh consumer WORK PREFIX GENERATOR
#       the same on the user's project of tests/package (its three kernel rules), against
#       the installed PREFIX, in a build folder whose name has a space; the control touches
#       the header its kernel includes, which only the compiler's dependency files name, and
#       each rule's image must be built again.
#
# Exit status: 0 as expected, 1 not, 2 usage.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
step=${1:-}
fail() { echo "check.sh $step: $*" >&2; exit 1; }

# The lines of a build's output (GENERATOR OUTPUT) that show work, none where there was none:
# the "-- " lines of CMake when the build runs configure again, and each step's line, which
# Ninja begins with "[N/M]" and Make with "[ NN%]" (Make's "Built target" lines come whether
# there was work or not). Ninja's output that has neither a step nor "no work to do" is all
# shown, as work of some unknown kind.
work_lines() {
    case $1 in
    Ninja)
        grep -E '^\[[0-9]+/[0-9]+\] |^-- ' <<<"$2" || grep -qx 'ninja: no work to do.' <<<"$2" ||
            grep -v '^ninja explain: ' <<<"$2"
        ;;
    *) grep -E '^\[ *[0-9]+%\] |^-- |Re-running CMake' <<<"$2" | grep -Ev '^\[ *[0-9]+%\] Built target ' ;;
    esac
}

# build GENERATOR BUILD [TARGET]: builds and prints the output, where Ninja's says why it ran
# each step.
build() {
    local explain=()
    [[ $1 == Ninja ]] && explain=(-- -d explain)
    cmake --build "$2" --parallel 2 --target "${3:-all}" "${explain[@]}" 2>&1
}

# expect_no_work WHEN GENERATOR BUILD
expect_no_work() {
    local out work
    out=$(build "$2" "$3") || { printf '%s\n' "$out"; fail "the build $1 failed"; }
    work=$(work_lines "$2" "$out") || true
    if [[ -n $work ]]; then
        printf '%s\n' "$out"
        fail "the build $1 had work to do ($2, $3): $(wc -l <<<"$work") steps"
    fi
    echo "check.sh: $2: no work $1"
}

# project quiet|loud SOURCE BUILD GENERATOR TOUCH TARGET [-DVAR=VALUE...]
project() {
    local quiet=$1 source=$2 build_dir=$3 generator=$4 touch=$5 target=$6 out work
    shift 6
    rm -rf "$build_dir"
    local configure=(cmake -S "$source" -B "$build_dir" -G "$generator" "$@")
    "${configure[@]}" >/dev/null || fail "configure failed: ${configure[*]}"
    out=$(cmake --build "$build_dir" --parallel 2 2>&1) || { printf '%s\n' "$out"; fail "the build failed"; }
    if [[ $quiet == quiet ]] && grep -iE 'warning:|warning [a-z]' <<<"$out"; then
        fail "the build printed the warnings above ($generator)"
    fi
    expect_no_work "after a build" "$generator" "$build_dir"
    "${configure[@]}" >/dev/null || fail "configure failed again: ${configure[*]}"
    expect_no_work "after configure" "$generator" "$build_dir"
    # The control.
    [[ -e $touch ]] || fail "no file $touch to touch"
    touch "$touch"
    out=$(build "$generator" "$build_dir" "$target") || { printf '%s\n' "$out"; fail "the build failed"; }
    work=$(work_lines "$generator" "$out") || true
    [[ -n $work ]] || fail "control: no work after $touch was touched, so the check sees none"
    echo "check.sh: $generator: control: $(wc -l <<<"$work") steps after $touch was touched:"
    printf '%s\n' "$work"
    for file in "${rebuilt[@]}"; do
        [[ $file -nt $touch ]] || fail "control: $file was not built again after $touch was touched"
    done
}

# The files that the control must build again (their paths in BUILD).
rebuilt=()

case $step in
project)
    [[ $# -ge 6 ]] || exit 2
    project loud "${@:2}"
    ;;
tree)
    [[ $# -ge 3 ]] || exit 2
    build_dir=$2/tree-${3// /-}
    project quiet "$src" "$build_dir" "$3" "$build_dir/devrt-symbols.txt" devrt-amdgcn \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEVRT_HARDWARE_TARGETS=gfx90a "${@:4}"
    ;;
consumer)
    [[ $# -eq 4 ]] || exit 2
    work=$2/consumer-${4// /-}
    rm -rf "$work"
    "$src/tests/package/check.sh" consumer-project "$work/project"
    rebuilt=("$work/my build/app_kernels.so" "$work/my build/app_kernels.gfx90a.hsaco"
        "$work/my build/app_kernels_nvptx.ptx")
    project loud "$work/project" "$work/my build" "$4" "$work/project/factor.h" all \
        -DCMAKE_PREFIX_PATH="$3" -DCMAKE_BUILD_TYPE=Release
    ;;
*)
    echo "usage: check.sh project|tree|consumer ..." >&2
    exit 2
    ;;
esac
