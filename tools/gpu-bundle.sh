#!/usr/bin/env bash
# Builds the GPU bundle: a folder that runs on a machine with nothing but
# glibc and an NVIDIA driver, to check and time tfmc's CUDA libraries there.
#   tools/gpu-bundle.sh [--opencl] [--models a,b] [OUT]   (default: build/gpu-bundle)
# It holds:
#   bin/     tfm-run, tfm-bench and tfm-weights (linked standalone: ldd shows
#            glibc alone), stripped;
#   models/  each model of `models` below (or --models) compiled twice:
#            NAME-gpu for CUDA capability 80 (which H100 and H200 run), or
#            for OpenCL with --opencl (to try the bundle on a CPU's OpenCL
#            platform, POCL), and NAME-cpu for the CPU; both for AVX2 hosts;
#   check.sh what to run there (tools/gpu-bundle/check.sh says what it does).
# The folder is checked before it is declared built: at most 64 MiB, and no
# binary or library that needs a shared library outside glibc, libstdc++ and
# the driver (which the CUDA libraries open at their first call).
# Uses the build in build/ (TFM_BUILD_DIR): run tools/build.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TFM_BUILD_DIR:-$root/build}/bin
# name:config:tfmc options
models=(
  "gpt2-small:gpt2-small.json:"
  "llama-110m:llama-110m.json:"
  "llama2-7b-f16:llama2-7b.json:--dtype f16"
)
host=x86-64-linux-sse41-avx-f16c-fma-avx2
gpu=cuda-cuda_capability_80
chosen="" out=""
while [ $# -gt 0 ]; do
  case $1 in
    --opencl) gpu=opencl-cl_doubles ;;
    --models) chosen=${2:?--models needs names}; shift ;;
    -*) echo "gpu-bundle: unknown option '$1'" >&2; exit 2 ;;
    *) out=$1 ;;
  esac
  shift
done
out=${out:-$root/build/gpu-bundle}
known=$(printf '%s\n' "${models[@]}" | cut -d: -f1 | tr '\n' ' ')
IFS=, read -ra wanted <<<"$chosen"
for name in "${wanted[@]}"; do
  [[ " $known" == *" $name "* ]] ||
    { echo "gpu-bundle: --models: no model '$name'; the models are: $known" >&2; exit 2; }
done
limit_bytes=$((64 << 20))

for tool in tfmc tfm-run tfm-bench tfm-weights; do
  [ -x "$bin/$tool" ] || { echo "gpu-bundle: $bin/$tool is missing; run tools/build.sh" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/models"
for tool in tfm-run tfm-bench tfm-weights; do
  strip -o "$out/bin/$tool" "$bin/$tool"
done
cp "$root/tools/gpu-bundle/check.sh" "$out/check.sh"

# A model folder as tfm-run reads it: the library, its header and manifest;
# not tfmc's objects.
compile() { # name config target options...
  local name=$1 config=$2 target=$3
  shift 3
  local scratch
  scratch=$(mktemp -d)
  "$bin/tfmc" "$root/configs/$config" --target "$target" -o "$scratch/m" "$@" >/dev/null
  mkdir -p "$out/models/$name"
  cp "$scratch"/m/lib*.so "$scratch"/m/*.h "$scratch/m/manifest.json" "$out/models/$name/"
  rm -rf "$scratch"
}
for entry in "${models[@]}"; do
  IFS=: read -r name config options <<<"$entry"
  [ -z "$chosen" ] || [[ ",$chosen," == *",$name,"* ]] || continue
  # shellcheck disable=SC2086 # options are words
  compile "$name-gpu" "$config" "$host-$gpu" $options
  # shellcheck disable=SC2086
  compile "$name-cpu" "$config" "$host" $options
done

# Nothing but glibc (libc, libm, the loader), libstdc++ and, opened later,
# the driver.
status=0
while IFS= read -r file; do
  needed=$(ldd "$file" | awk '{print $1}' |
           grep -Ev '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libstdc\+\+\.so\.6|/lib64/ld-linux-x86-64\.so\.2)$' || true)
  if [ -n "$needed" ]; then
    echo "gpu-bundle: ${file#"$out"/} needs $(echo "$needed" | tr '\n' ' ')outside glibc and libstdc++" >&2
    status=1
  fi
done < <(find "$out/bin" "$out/models" -type f \( -name '*.so' -o -perm -u+x \))

echo "gpu-bundle: $out"
(cd "$out" && du -b bin/* models/*/lib*.so check.sh | sort -k2)
total=$(du -sb "$out" | cut -f1)
echo "gpu-bundle: $total bytes in all ($((total >> 20)) MiB; the limit is $((limit_bytes >> 20)) MiB)"
if [ "$total" -gt "$limit_bytes" ]; then
  echo "gpu-bundle: $out is over $((limit_bytes >> 20)) MiB" >&2
  status=1
fi
exit $status
