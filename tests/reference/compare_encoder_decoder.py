"""An encoder-decoder's decoder logits against the float64 oracle, for one
model shape and one weight file format.

usage: compare_encoder_decoder.py --config CONFIG.json [--format safetensors|gguf]
                                  [--seed S] [--attention ALGORITHM] [--schedule NAME]
                                  [--target TARGET]

Compiles the config (tfmc), writes random weights in the format (tfm-weights;
safetensors under Hugging Face's names, GGUF under llama.cpp's) and, for a
seeded random source of 11 tokens and one of the compiled source length, runs
the probe tfm-logits: it encodes the source (the encoder once, every decoder
layer's cross-attention keys and values into the source caches), then runs
the decoder's tokens from the decoder start token: a prefill of 1, 7 and 64
tokens, 64 then 32 single-token decodes, and one score of 96 tokens. Each
row must be within a relative error max|ours - ref| / max|ref| <= 1e-4 of
the oracle's logits at the same position (t5_oracle.py, written from
transformers' modeling_t5.py; seq2seq_oracle.py, from modeling_marian.py
and, for tfm's own 2017 Transformer, the paper, checked against
torch.nn.Transformer), which reads the same file with its own reader
(weight_files.py).
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import compare_logits  # noqa: E402
import compiled_shape  # noqa: E402
import seq2seq_oracle  # noqa: E402
import t5_oracle  # noqa: E402
import testlib  # noqa: E402
import weight_files  # noqa: E402

TOLERANCE = 1e-4
# (prefill tokens, decode steps after it); prefill 0: score that many tokens
CASES = [(1, 0), (7, 0), (64, 0), (64, 32), (0, 96)]


def oracle_for(config, weight_format, weights):
    """T5's oracle, or Marian's and the 2017 Transformer's, on the file's
    tensors (Marian's and tfm's own GGUFs use the manifest's names, which
    seq2seq_oracle reads as they are)."""
    tensors = (weight_files.read_gguf(weights)[1] if weight_format == "gguf"
               else weight_files.read_safetensors(weights))
    if t5_oracle.handles(config):
        if weight_format == "gguf":
            tensors = t5_oracle.hf_names_from_gguf(tensors)
        return t5_oracle.T5Oracle(config, tensors)
    return seq2seq_oracle.Seq2SeqOracle(config, tensors)


def check_case(model_dir, weights, source, tokens, prefill, decodes, reference, out_path):
    """Whether the probe's rows for the case are within TOLERANCE."""
    used = tokens[:prefill + decodes]
    testlib.check_run([testlib.bin("tfm-logits"), "--model", model_dir, "--weights", weights,
                       "--source", ",".join(map(str, source)),
                       "--tokens", ",".join(map(str, used)), "--prefill", str(prefill),
                       "--out", out_path])
    ours = np.load(out_path).astype(np.float64)
    rows = decodes if prefill == 0 else 1 + decodes
    if ours.shape != (rows, reference.shape[1]):
        print(f"FAIL: {out_path}: shape {ours.shape}, expected {(rows, reference.shape[1])}")
        return False
    worst = 0.0
    for row in range(rows):
        position = row if prefill == 0 else prefill - 1 + row
        worst = max(worst, compare_logits.relative_error(ours[row], reference[position]))
    ok = bool(np.isfinite(worst)) and worst <= TOLERANCE
    label = (f"score {decodes}" if prefill == 0
             else f"prefill {prefill}" + (f" + {decodes} decodes" if decodes else ""))
    print(f"source {len(source)}, {label}: max relative error {worst:.3e} over {rows} rows "
          f"({'ok' if ok else 'FAIL'})", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="config.json of the shape")
    parser.add_argument("--format", default="safetensors", choices=["safetensors", "gguf"])
    parser.add_argument("--seed", type=int, default=1, help="seed of weights and tokens")
    compiled_shape.add_arguments(parser)
    args = parser.parse_args()

    work, folder, model_dir = compiled_shape.compile_shape(args)
    shape = os.path.splitext(os.path.basename(args.config))[0]
    weight_args = argparse.Namespace(format=args.format, dtype="f32", shards=1, seed=args.seed,
                                     config=args.config, read_as="f32")
    weights = compare_logits.write_weights(weight_args, model_dir, work)
    with open(args.config) as f:
        config = json.load(f)
    oracle = oracle_for(config, args.format, weights)
    with open(os.path.join(model_dir, "manifest.json")) as f:
        source_length = int(json.load(f)["config"]["source_length"])
    vocab = config["vocab_size"]
    generator = torch.Generator().manual_seed(args.seed)
    print(f"{shape} from {args.format}: seed {args.seed}, tolerance {TOLERANCE:g}", flush=True)
    results = []
    for source_tokens in (11, source_length):
        source = torch.randint(0, vocab, (source_tokens,), generator=generator).tolist()
        longest = max(p + k for p, k in CASES)
        tokens = [oracle.decoder_start_token_id] + torch.randint(
            0, vocab, (longest - 1,), generator=generator).tolist()
        # The decoder is causal: every case is a prefix of this run.
        reference = oracle.decoder_logits(source, tokens).numpy()
        for prefill, decodes in CASES:
            out = os.path.join(work, f"logits-{folder}-{args.format}-s{source_tokens}-"
                                     f"p{prefill}-k{decodes}.npy")
            results.append(check_case(model_dir, weights, source, tokens, prefill, decodes,
                                      reference, out))
    testlib.discard(os.path.dirname(weights) if args.format == "safetensors" else weights)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
