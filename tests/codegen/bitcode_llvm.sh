#!/bin/sh
# bitcode_llvm.sh LLVM_DIS BITCODE MAJOR: the bitcode records the LLVM that made it, as
# llvm-dis shows it (llvm.ident, clang's version); every record must name LLVM MAJOR.
# Exit status: 0 it does, 1 it does not, 2 the bitcode cannot be read.
set -u
text=$("$1" "$2" -o -) || exit 2
idents=$(printf '%s\n' "$text" | sed -n 's/^![0-9]* = !{!"\(.*clang version [0-9][^"]*\)"}$/\1/p' | sort -u)
if [ -z "$idents" ]; then
    echo "$2 records no clang version (llvm.ident)"
    exit 1
fi
printf '%s\n' "$idents" | while read -r ident; do
    version=$(printf '%s\n' "$ident" | sed 's/.*clang version \([0-9]*\)\..*/\1/')
    if [ "$version" != "$3" ]; then
        echo "$2 was made by LLVM $version ($ident), not LLVM $3"
        exit 1
    fi
    echo "$2: made by LLVM $version ($ident)"
done
