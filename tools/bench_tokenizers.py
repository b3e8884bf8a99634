#!/usr/bin/env python3
"""Tokenizing speed: a 1 MB prompt through every tokenizer format tfm-run
reads, as `tfm-run --tokenize --tokenizer FILE -f TEXT` (no model), median
wall time of several runs. A benchmark, not a test: nothing is asserted.

usage: tools/bench_tokenizers.py [--bin build/bin] [--shared ../shared]
                                 [--rounds 3] [--megabytes 1]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

TOKENIZERS = [
    ("llama2.c tokenizer.bin, 512 tokens", "models/aidreams260k/tokenizer.bin"),
    ("llama2.c tokenizer.bin, 32000 tokens", "models/llama2-tokenizer/tokenizer.bin"),
    ("SentencePiece tokenizer.model", "models/llama2-tokenizer/tokenizer.model"),
    ("GGUF SentencePiece (llama-spm)", "models/gguf-vocab/ggml-vocab-llama-spm.gguf"),
    ("byte-level BPE encoder.json", "models/gpt2-tokenizer/encoder.json"),
    ("GGUF byte-level BPE (gpt-2)", "models/gguf-vocab/ggml-vocab-gpt-2.gguf"),
    ("GGUF byte-level BPE (falcon)", "models/gguf-vocab/ggml-vocab-falcon.gguf"),
    ("GGUF byte-level BPE (mpt)", "models/gguf-vocab/ggml-vocab-mpt.gguf"),
]

# Our own sentences, repeated with a counter so that the text is not one
# string over and over (caches in the tokenizers would flatter it).
SENTENCE = ("Entry {n}: the keeper of the lighthouse wrote that the wind turned west at "
            "dawn, the gulls stayed on the rocks, and the boat from the mainland was late "
            "again; prices of flour and rope went up by {p} per cent.\n")


def prompt_text(megabytes):
    target = int(megabytes * (1 << 20))
    parts, size, n = [], 0, 0
    while size < target:
        line = SENTENCE.format(n=n, p=(n * 7) % 13)
        parts.append(line)
        size += len(line)
        n += 1
    return "".join(parts)[:target]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="build/bin")
    parser.add_argument("--shared", default=os.environ.get("TFM_SHARED_DIR", "../shared"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--megabytes", type=float, default=1.0)
    args = parser.parse_args()

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(prompt_text(args.megabytes))
        text = f.name
    print(f"{args.megabytes:g} MB prompt, median of {args.rounds} runs of "
          f"tfm-run --tokenize -f (no model)")
    print(f"{'tokenizer':40} {'tokens':>9} {'median s':>9} {'min s':>7} {'max s':>7}")
    try:
        for name, rel in TOKENIZERS:
            path = os.path.join(args.shared, rel)
            if not os.path.exists(path):
                print(f"{name:40} missing: {path}")
                continue
            times, tokens, refusal = [], 0, None
            for _ in range(args.rounds):
                start = time.perf_counter()
                done = subprocess.run([os.path.join(args.bin, "tfm-run"), "--tokenize",
                                       "--tokenizer", path, "-f", text],
                                      capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                if done.returncode != 0:
                    refusal = done.stderr.strip().splitlines()[-1]
                    break
                tokens = done.stdout.count(",") + 1
            if refusal:
                print(f"{name:40} refused: {refusal}")
                continue
            print(f"{name:40} {tokens:>9} {statistics.median(times):>9.3f} "
                  f"{min(times):>7.3f} {max(times):>7.3f}")
    finally:
        os.remove(text)


if __name__ == "__main__":
    main()
