#!/usr/bin/env bash
# Every test: installs what is missing, builds, runs the whole CTest suite
# (unit tests, lit pass tests, reference-oracle and end-to-end tests).
# Data tests read ../shared (TFM_SHARED_DIR); with CI=true missing data fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
ctest --test-dir build --output-on-failure -j2 "$@"
