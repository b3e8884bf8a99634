#!/usr/bin/env bash
# Runs one fuzz target of tests/fuzz for SECONDS (default 600):
#   tools/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]
# TARGET is a fuzz_<TARGET>.cpp name: config, safetensors, safetensors_index,
# gguf, llama2c_checkpoint, tokenizer_llama2c, tokenizer_sentencepiece,
# tokenizer_json, tokenizer_vocab_merges, tokenizer_roundtrip, mlir.
#
# Builds build-fuzz/ with clang 14 (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer; the runtime and the compiler's IR front end,
# not its Halide half), seeds the corpus from files the project makes itself
# (tfm-weights on tiny configs, configs/, the lit tests' modules, and
# modules the main build's tfmc writes) and the tokenizer files in
# ../shared, then fuzzes. The corpus grows in
# build-fuzz/corpus/TARGET; a crash is written to build-fuzz/crashes/TARGET/.
# Once fixed, copy the crashing input to tests/fuzz/regressions/TARGET/: the
# test suite replays every file there (fuzz_regressions_TARGET).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]}
seconds=${2:-600}
shift $(( $# < 2 ? $# : 2 ))
shared=${TFM_SHARED_DIR:-$PWD/../shared}
[ -f "tests/fuzz/fuzz_$target.cpp" ] || { echo "fuzz.sh: no target '$target' (tests/fuzz/fuzz_$target.cpp)" >&2; exit 2; }

tools/install-deps.sh
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
      -DTFM_RUNTIME_ONLY=ON -DTFM_FUZZ=ON -DTFM_SANITIZE=address,undefined >/dev/null
cmake --build build-fuzz -j2 --target "fuzz_$target" tfm-weights

work=build-fuzz/seeds
mkdir -p "$work" "build-fuzz/corpus/$target" "build-fuzz/crashes/$target"
seeds="$work/$target"
rm -rf "$seeds" && mkdir -p "$seeds"

# Tiny configs of both families, the shapes FuzzSupport's manifests have.
cat > "$work/tiny_llama.json" <<'JSON'
{"model_type": "llama", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 2,
 "num_attention_heads": 2, "vocab_size": 16, "max_position_embeddings": 8}
JSON
cat > "$work/tiny_gpt2.json" <<'JSON'
{"model_type": "gpt2", "n_embd": 8, "n_inner": 16, "n_layer": 2, "n_head": 2, "bos_token_id": 0, "eos_token_id": 0,
 "vocab_size": 16, "n_positions": 8}
JSON
weights() { build-fuzz/bin/tfm-weights "$@" --seed 1 >/dev/null; }

case "$target" in
  config)
    cp configs/*.json tests/reference/configs/*.json "$work"/tiny_*.json "$seeds/" ;;
  safetensors)
    for family in llama gpt2; do
      weights "$work/tiny_$family.json" --format safetensors -o "$work/st-$family"
      cp "$work/st-$family/model.safetensors" "$seeds/$family.safetensors"
    done ;;
  safetensors_index)
    weights "$work/tiny_llama.json" --format safetensors --shards 2 -o "$work/st-sharded"
    cp "$work/st-sharded/model.safetensors.index.json" "$seeds/" ;;
  gguf)
    for family in llama gpt2; do
      weights "$work/tiny_$family.json" --format gguf -o "$seeds/$family.gguf"
    done ;;
  llama2c_checkpoint)
    weights "$work/tiny_llama.json" -o "$seeds/tiny.bin" ;;
  tokenizer_llama2c)
    cp "$shared/models/aidreams260k/tokenizer.bin" "$seeds/" ;;
  tokenizer_sentencepiece)
    cp "$shared/models/llama2-tokenizer/tokenizer.model" "$seeds/" ;;
  tokenizer_json)
    cat > "$seeds/tokenizer.json" <<'JSON'
{"version": "1.0", "added_tokens": [{"id": 6, "content": "<|endoftext|>", "special": true}],
 "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
 "decoder": {"type": "ByteLevel"},
 "model": {"type": "BPE", "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "He": 4, "ll": 5,
           "<|endoftext|>": 6}, "merges": ["H e", "l l"]}}
JSON
    ;;
  tokenizer_vocab_merges)
    printf '{"H": 0, "e": 1, "l": 2, "o": 3, "He": 4, "ll": 5}\0#version: 0.2\nH e\nl l\n' \
      > "$seeds/vocab-and-merges" ;;
  tokenizer_roundtrip)
    printf 'Hello world' > "$seeds/ascii"
    printf 'Once upon a time \xf0\x9f\x98\x80 \xe2\x96\x81 <s> <|endoftext|> \xff\xfe' > "$seeds/mixed" ;;
  mlir)
    # Every module of the lit tests (split at their '// -----'), and whole
    # models as tfmc lowers them (the main build's tfmc, where built).
    for test in $(find compiler -name '*.mlir'); do
      awk -v out="$seeds/$(basename "$test" .mlir)" \
        '/^\/\/ -----/ { n++; next } { print > (out "-" n+0 ".mlir") }' "$test"
    done
    if [ -x build/bin/tfmc ]; then
      for config in configs/aidreams260k.json "$work/tiny_llama.json" "$work/tiny_gpt2.json"; do
        build/bin/tfmc "$config" --target avx2 --emit mlir -o "$seeds/$(basename "$config" .json).mlir"
        # and as the builder hands it to the passes
        build/bin/tfmc "$config" --target avx2 --dump-ir-after-all -o "$work/dump" >/dev/null
        cp "$work/dump/ir/input.mlir" "$seeds/$(basename "$config" .json)-input.mlir"
      done
    fi ;;
esac

# The loaders read paths, so each input is written to a file under TMPDIR
# first: on tmpfs that runs about 3x as many executions per second.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm

echo "fuzz.sh: fuzz_$target for $seconds s; corpus build-fuzz/corpus/$target" >&2
TFM_SHARED_DIR="$shared" build-fuzz/bin/"fuzz_$target" "build-fuzz/corpus/$target" "$seeds" \
  -max_total_time="$seconds" -artifact_prefix="build-fuzz/crashes/$target/" \
  -print_final_stats=1 -rss_limit_mb=4096 -timeout=20 "$@"
