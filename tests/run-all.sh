#!/usr/bin/env bash
# The whole test suite: the default build's tests (the package's among them: install,
# cpack, the examples built out of tree), the same sources built once more with Unix
# Makefiles, then the emulation and unit tests again under AddressSanitizer with
# UndefinedBehaviorSanitizer, and under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain/setup.sh
cmake --workflow --preset test
cmake --workflow --preset makefiles
if [[ -z ${DEVRT_SKIP_SANITIZERS:-} ]]; then
    cmake --workflow --preset asan
    cmake --workflow --preset tsan
fi
