#!/usr/bin/env bash
# Every test: installs what is missing, builds, runs the whole CTest suite
# (unit tests, lit pass tests, reference-oracle and end-to-end tests), then
# builds the runtime again under AddressSanitizer and UndefinedBehavior-
# Sanitizer (build-asan/, no compiler: its tfmc is build/'s) and runs the
# runtime's unit tests, the fuzz regression corpora and the bad-input
# end-to-end tests there.
# Data tests read ../shared (TFM_SHARED_DIR); with CI=true missing data fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
ctest --test-dir build --output-on-failure -j2 "$@"

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DTFM_RUNTIME_ONLY=ON \
      -DTFM_SANITIZE=address,undefined -DTFM_TOOLS_BIN_DIR="$PWD/build/bin" >/dev/null
cmake --build build-asan -j2
# Leaks are not errors here: a refused run exits through llvm::cl and static
# state on purpose; every other ASan and UBSan report is.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j2 "$@"
