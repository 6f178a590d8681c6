#!/usr/bin/env bash
# libdevrt.so's ABI, as libabigail records it (docs/abi.md, "The library's ABI"):
#
#   abi.sh dump  LIBRARY INCLUDE OUT        record LIBRARY's ABI in OUT: the functions that
#                                           host.h, attach.h, cuda.h and hip.h under INCLUDE
#                                           declare, and every type they reach
#   abi.sh check LIBRARY INCLUDE BASELINE   compare LIBRARY's ABI with BASELINE's
#
# The functions come from tests/api/public_names.py (clang's syntax tree of the headers;
# $DEVRT_CLANG, else LLVM 19's clang), which are all that libdevrt.so exports (unit.exports
# checks that); the list keeps the record to them in any library given. LIBRARY needs its
# debug information (the default preset builds RelWithDebInfo).
#
# check's exit status: 0 the same ABI, functions added or not; 1 a change that abidiff
# reports (bit 4, ABIDIFF_ABI_CHANGE, such as a struct that grew, or bit 8,
# ABIDIFF_ABI_INCOMPATIBLE_CHANGE, such as a function removed) under the baseline's SONAME;
# 3 the library's SONAME is not the baseline's (SOVERSION moved: record the baseline
# anew); 2 usage, or a tool failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
clang=${DEVRT_CLANG:-/usr/lib/llvm-19/bin/clang}
usage() { echo "usage: abi.sh dump|check LIBRARY INCLUDE FILE" >&2; exit 2; }
[[ $# -eq 4 ]] || usage
mode=$1 library=$2 include=$3 file=$4
for tool in abidw abidiff; do
    command -v $tool >/dev/null || { echo "abi.sh: no $tool (Debian: abigail-tools)" >&2; exit 2; }
done
[[ -f $library ]] || { echo "abi.sh: $library: no such file" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
functions=$(python3 "$here/../api/public_names.py" --include "$include" --clang "$clang" \
    --kind host-functions | cut -f2) || exit 2
[[ -n $functions ]] || { echo "abi.sh: no public functions under $include" >&2; exit 2; }
{ echo "[abi_whitelist]"; printf '  %s\n' $functions; } >"$work/functions"

# No locations and no build paths, so that the record is the same from any checkout and an
# edit that moves a declaration leaves it as it is.
dump() {
    abidw --headers-dir "$include/devrt" --drop-private-types --drop-undefined-syms \
        --no-show-locs --no-comp-dir-path --no-corpus-path --kmi-whitelist "$work/functions" \
        --out-file "$1" "$library" || { echo "abi.sh: abidw failed on $library" >&2; exit 2; }
    grep -q "<function-decl" "$1" ||
        { echo "abi.sh: $library: no function types recorded (no debug information?)" >&2; exit 2; }
}
soname() { sed -n "s/^<abi-corpus .*soname=[\"']\([^\"']*\)[\"'].*/\1/p" "$1" | head -1; }

case $mode in
dump)
    dump "$file"
    echo "abi.sh: $(soname "$file"), $(grep -c "<elf-symbol " "$file") functions recorded in $file"
    ;;
check)
    [[ -f $file ]] || { echo "abi.sh: $file: no such file" >&2; exit 2; }
    dump "$work/current.abi"
    have=$(soname "$work/current.abi") want=$(soname "$file")
    [[ -n $have && -n $want ]] || { echo "abi.sh: no SONAME in the library or in $file" >&2; exit 2; }
    if [[ $have != "$want" ]]; then
        echo "abi.sh: the library is $have, the baseline $file records $want: SOVERSION moved," \
            "so record the baseline anew (docs/abi.md)"
        exit 3
    fi
    status=0
    abidiff --no-added-syms "$file" "$work/current.abi" || status=$?
    if ((status & ~12)); then
        echo "abi.sh: abidiff failed (exit $status)" >&2
        exit 2
    fi
    if ((status != 0)); then
        echo "abi.sh: abidiff exit $status: $have's ABI changed (above); a program built" \
            "against the baseline may break. Undo the change, or move SOVERSION (the" \
            "project's major version) and record the baseline anew (docs/abi.md)"
        exit 1
    fi
    echo "abi.sh: $have: the ABI of $file, nothing changed or removed"
    ;;
*) usage ;;
esac
