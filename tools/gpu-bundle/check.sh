#!/usr/bin/env bash
# The GPU bundle's check (tools/gpu-bundle.sh builds the bundle around it).
#   ./check.sh [--device N] [--models a,b] [--prompt 512] [--decode 64] [--repeat 5]
#   ./check.sh --cpu-only
# Needs nothing but the bundle, bash and coreutils. For each model it writes
# random weights (bin/tfm-weights, into work/; 13.5 GB for llama2-7b-f16),
# then:
#  - on a GPU: checks the GPU library's logits (a prefill of --prompt
#    tokens and decode steps) against the CPU library's, and times prefill
#    and decode against the device's own multiply-add peak and copy
#    bandwidth, measured through the library (bin/tfm-bench --reference ...
#    --device N): one table per model, with `vs ref` the logit difference,
#    `% peak` prefill's share of the peak and `% of read` decode's share of
#    the bandwidth.
#  - with --cpu-only (any machine): the small models' CPU libraries run a
#    prefill and decode steps, and their GPU libraries either run (a GPU is
#    here) or are refused with a message naming the NVIDIA driver or device,
#    exit status 1 and no signal.
# Exits non-zero when any check fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$here/work
cpu_only=0 device="" prompt=512 decode=64 repeat=5
models="gpt2-small,llama-110m,llama2-7b-f16"
small_models="gpt2-small,llama-110m" # --cpu-only: weights of a few hundred MB
usage() { sed -n '2,4p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --cpu-only) cpu_only=1 ;;
    --device) device=${2:?--device needs a number}; shift ;;
    --models) models=${2:?--models needs names}; shift ;;
    --prompt) prompt=${2:?--prompt needs a number}; shift ;;
    --decode) decode=${2:?--decode needs a number}; shift ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift ;;
    --work) work=${2:?--work needs a folder}; shift ;;
    *) echo "check.sh: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
if [ "$cpu_only" = 1 ]; then
  [ -z "$device" ] || { echo "check.sh: --device goes with the GPU check, not --cpu-only" >&2; exit 2; }
  models=$small_models
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)
cd "$here" # the tables name models/NAME-gpu, not the whole path
failed=0

weights_of() { # name: writes the model's random weights once, prints their path
  local file=$work/$1.gguf
  if [ ! -s "$file" ]; then
    "bin/tfm-weights" --model "models/$1-cpu" --format gguf -o "$file.part" >&2
    mv "$file.part" "$file"
  fi
  echo "$file"
}

check_on_gpu() { # name
  local name=$1 weights
  weights=$(weights_of "$name")
  echo "== $name: the GPU library against the CPU library, then timed"
  if ! "bin/tfm-bench" --weights "$weights" --reference "models/$name-cpu" \
       --prompt "$prompt" --decode "$decode" --repeat "$repeat" ${device:+--device "$device"} \
       "models/$name-gpu"; then
    echo "check.sh: $name failed" >&2
    failed=1
  fi
}

check_on_cpu() { # name
  local name=$1 weights rates status=0 message
  weights=$(weights_of "$name")
  if rates=$("bin/tfm-bench" --weights "$weights" --prompt 32 --decode 8 --repeat 1 \
             --rates "models/$name-cpu"); then
    echo "== $name-cpu: runs ($rates, tok/s of prefill and decode)"
  else
    echo "check.sh: $name-cpu failed" >&2
    failed=1
  fi
  message=$("bin/tfm-bench" --weights "$weights" --prompt 8 --decode 1 --repeat 1 \
            --rates "models/$name-gpu" 2>&1) || status=$?
  if [ "$status" = 0 ]; then
    echo "== $name-gpu: runs (a GPU is here: run ./check.sh without --cpu-only)"
  elif [ "$status" = 1 ] && grep -q NVIDIA <<<"$message"; then
    echo "== $name-gpu: refused as it should be here: ${message#tfm-bench: error: }"
  else
    echo "check.sh: $name-gpu: exit status $status (over 128: a signal), expected 1 naming the NVIDIA driver or device: $message" >&2
    failed=1
  fi
}

IFS=, read -ra names <<<"$models"
for name in "${names[@]}"; do
  if [ ! -d "models/$name-cpu" ] || [ ! -d "models/$name-gpu" ]; then
    echo "check.sh: no model $name in models/" >&2
    failed=1
  elif [ "$cpu_only" = 1 ]; then
    check_on_cpu "$name"
  else
    check_on_gpu "$name"
  fi
done
exit $failed
