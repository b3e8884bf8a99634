"""An encoder's embeddings against the float64 oracle, for one model shape and
one weight file format.

usage: compare_embeddings.py --config CONFIG.json [--format safetensors|gguf]
                             [--dtype f32|f16] [--seed S] [--attention ALGORITHM] [--schedule NAME]
                             [--target TARGET]

Compiles the config (tfmc), writes random weights in the format (tfm-weights;
safetensors under Hugging Face's names, GGUF under llama.cpp's), and for a
seeded random text of 1, 7 and the context's tokens runs the probe tfm-logits
(the runtime's encode, then its pooling) for every pooling: each token's
hidden state (none), their mean, the first token's (cls) and the last's, and
the mean normalised to unit length. Each row must be within a relative error
max|ours - ref| / max|ref| <= 1e-4 of the oracle's (bert_oracle.py, written
from transformers' modeling_bert.py and modeling_roberta.py), which reads the
same file with its own reader (weight_files.py). --attention, --schedule and
--target compile with tfmc's (FlashAttention's key tiles, an OpenCL library run
through POCL).
"""

import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bert_oracle  # noqa: E402
import compare_logits  # noqa: E402
import compiled_shape  # noqa: E402
import testlib  # noqa: E402
import weight_files  # noqa: E402

TOLERANCE = 1e-4
# (pooling, normalize): every row, and each pooled vector.
POOLINGS = [("none", False), ("mean", False), ("cls", False), ("last", False), ("mean", True)]


def oracle_for(config, weight_format, weights):
    if weight_format == "gguf":
        tensors = bert_oracle.hf_names_from_gguf(weight_files.read_gguf(weights)[1])
    else:
        tensors = weight_files.read_safetensors(weights)
    return bert_oracle.BertOracle(config, tensors)


def check_case(model_dir, weights, tokens, pooling, normalize, oracle, out_path):
    """Whether the probe's rows are within TOLERANCE of the oracle's."""
    testlib.check_run([testlib.bin("tfm-logits"), "--model", model_dir, "--weights", weights,
                       "--tokens", ",".join(map(str, tokens)), "--prefill", "0",
                       "--pooling", pooling] + (["--normalize"] if normalize else []) +
                      ["--out", out_path])
    ours = np.load(out_path).astype(np.float64)
    reference = oracle.embedding(tokens, pooling, normalize).numpy().reshape(-1, ours.shape[-1])
    label = f"{len(tokens)} tokens, {pooling}{' normalized' if normalize else ''}"
    if ours.shape != reference.shape:
        print(f"{label}: FAIL: shape {ours.shape}, expected {reference.shape}", flush=True)
        return False
    error = max(compare_logits.relative_error(ours[r], reference[r]) for r in range(len(ours)))
    ok = bool(np.isfinite(error)) and error <= TOLERANCE
    print(f"{label}: max relative error {error:.3e} over {len(ours)} rows "
          f"({'ok' if ok else 'FAIL'})", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="config.json of the shape")
    parser.add_argument("--format", default="safetensors", choices=["safetensors", "gguf"])
    parser.add_argument("--dtype", default="f32", choices=["f32", "f16"])
    parser.add_argument("--seed", type=int, default=1, help="seed of weights and tokens")
    compiled_shape.add_arguments(parser)
    args = parser.parse_args()

    work, folder, model_dir = compiled_shape.compile_shape(args)
    shape = os.path.splitext(os.path.basename(args.config))[0]
    weight_args = argparse.Namespace(format=args.format, dtype=args.dtype, shards=1,
                                     seed=args.seed, config=args.config, read_as="f32")
    weights = compare_logits.write_weights(weight_args, model_dir, work)
    config = bert_oracle.load_config(args.config)
    oracle = oracle_for(config, args.format, weights)
    with open(os.path.join(model_dir, "manifest.json")) as f:
        context = int(json.load(f)["config"]["context_length"])
    vocab = config["vocab_size"]
    generator = torch.Generator().manual_seed(args.seed)
    print(f"{shape} from {args.format} ({args.dtype}): seed {args.seed}, tolerance "
          f"{TOLERANCE:g}", flush=True)
    results = []
    for count in (1, 7, context):
        tokens = torch.randint(0, vocab, (count,), generator=generator).tolist()
        for pooling, normalize in POOLINGS:
            out = os.path.join(work, f"embeddings-{folder}-{args.format}-{args.dtype}-{count}-"
                                     f"{pooling}{'-normalized' if normalize else ''}.npy")
            results.append(check_case(model_dir, weights, tokens, pooling, normalize, oracle,
                                      out))
    testlib.discard(os.path.dirname(weights) if args.format == "safetensors" else weights)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
