#!/usr/bin/env bash
# The main job in one command: build tfmc, compile a config, generate text.
#   tools/quickstart.sh ["prompt"]
# Uses the real aidreams260K checkpoint from ../shared when it is there, and
# otherwise a random-weight model of the same shape (its text is noise).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
prompt=${1:-"Echoes of"}
shared=${TFM_SHARED_DIR:-../shared}
build/bin/tfmc configs/aidreams260k.json -o generated/aidreams260k
if [ -f "$shared/models/aidreams260k/model.bin" ]; then
  weights=$shared/models/aidreams260k/model.bin
  tokenizer=$shared/models/aidreams260k/tokenizer.bin
else
  echo "quickstart: $shared/models/aidreams260k not found; using random weights" >&2
  weights=generated/aidreams260k/random.bin
  build/bin/tfm-weights configs/aidreams260k.json -o "$weights"
  tokenizer=${TFM_TOKENIZER:?"set TFM_TOKENIZER to a llama2.c tokenizer.bin with 512 tokens"}
fi
build/bin/tfm-run --model generated/aidreams260k --weights "$weights" --tokenizer "$tokenizer" \
  -p "$prompt" -n 100 --temp 0.8 --seed 42
