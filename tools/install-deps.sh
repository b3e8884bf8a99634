#!/usr/bin/env bash
# Installs the Debian 12 packages tfmc needs, and only those that are missing.
# Safe to run any number of times.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache       # build
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools  # MLIR/LLVM 22, TableGen, lit, FileCheck
  libzstd-dev                                    # static LLVM Support, linked into tfm-tblgen
  libhalide14-0-dev                              # kernels
  libicu-dev                                     # Unicode classes for the tokenizers
  libgtest-dev                                   # unit tests
  python3 python3-numpy python3-torch            # the reference oracle
  python3-sentencepiece                          # the reference Unigram encoder
  clang-14 libclang-rt-14-dev                    # libFuzzer for tests/fuzz (tools/fuzz.sh)
  python3-matplotlib                             # tools/plot_bench.py: tfm-bench's charts
  pocl-opencl-icd ocl-icd-opencl-dev             # GPU schedules run on OpenCL on the CPU
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
