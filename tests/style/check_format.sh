#!/bin/sh
# check_format.sh CLANG_FORMAT ROOT [FILE...]: exits 0 when every C source and header (the
# FILEs, or every one under ROOT) is as CLANG_FORMAT formats it with ROOT's .clang-format,
# 1 naming the files that are not, 2 on a usage error. The project pins one clang-format
# version (toolchain/setup.sh): versions disagree on details such as casts in macros.
set -u
if [ $# -lt 2 ]; then
    echo "usage: check_format.sh CLANG_FORMAT ROOT [FILE...]" >&2
    exit 2
fi
clang_format=$1
root=$2
shift 2
if ! command -v "$clang_format" >/dev/null 2>&1; then
    echo "check_format.sh: $clang_format not found (toolchain/setup.sh installs it)" >&2
    exit 2
fi
if [ ! -f "$root/.clang-format" ]; then
    echo "check_format.sh: $root has no .clang-format" >&2
    exit 2
fi
cd "$root" || exit 2
if [ $# -eq 0 ]; then
    # A clone lists its files through git; a source tree without .git (a tarball) by name.
    if [ -d .git ] || [ -f .git ]; then
        set -- $(git ls-files '*.c' '*.h')
    else
        set -- $(find . -path ./build -prune -o -path './build-*' -prune -o \
            \( -name '*.c' -o -name '*.h' \) -print)
    fi
fi
status=0
for file in "$@"; do
    if ! "$clang_format" --style=file --dry-run -Werror "$file" >/dev/null 2>&1; then
        echo "not formatted: $file (run: $clang_format -i $file)"
        status=1
    fi
done
[ $status -eq 0 ] && echo "$# files formatted"
exit $status
