#!/bin/sh
# expect.sh STATUS PATTERN [STATUS PATTERN]... -- COMMAND [ARG]...
# Runs COMMAND and passes when its exit status is one of the STATUSes and its output
# (stdout and stderr) has a line matching that STATUS's extended regular expression. CTest's
# PASS_REGULAR_EXPRESSION alone would ignore the exit status.
set -u
pairs=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    if [ $# -lt 2 ]; then
        echo "expect.sh: STATUS without PATTERN" >&2
        exit 2
    fi
    pairs="$pairs$1 $2
"
    shift 2
done
if [ $# -lt 2 ] || [ -z "$pairs" ]; then
    echo "usage: expect.sh STATUS PATTERN [STATUS PATTERN]... -- COMMAND [ARG]..." >&2
    exit 2
fi
shift
output=$("$@" 2>&1)
actual=$?
printf '%s\n' "$output"
while IFS= read -r pair; do
    [ -n "$pair" ] || continue
    status=${pair%% *}
    pattern=${pair#* }
    if [ "$actual" -eq "$status" ] && printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
        exit 0
    fi
done <<PAIRS
$pairs
PAIRS
echo "expect.sh: exit status $actual and the output above match none of:" >&2
printf '%s' "$pairs" | sed 's/^/  status /' >&2
exit 1
