#!/usr/bin/env bash
# The whole test suite: the default build's tests, then the emulation and unit tests again
# under AddressSanitizer with UndefinedBehaviorSanitizer, and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain/setup.sh
cmake --workflow --preset test
if [[ -z ${DEVRT_SKIP_SANITIZERS:-} ]]; then
    cmake --workflow --preset asan
    cmake --workflow --preset tsan
fi
