"""Logits of a compiled model against the float64 oracle, for one model shape.

usage: compare_logits.py --config CONFIG.json [--seed S]

Writes random weights (tfm-weights), compiles the config (tfmc), picks a
seeded random token sequence and runs the probe tfm-logits for each case:
a prefill of P tokens, then K single-token decodes. Each row of the probe's
output (row 0 after the prefill, row j after decoding tokens[P+j-1]) must be
within a relative error max|ours - ref| / max|ref| <= 1e-4 of the oracle's
logits at the same position.
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import testlib  # noqa: E402
from llama_oracle import LlamaOracle, load_config, read_llama2c  # noqa: E402

TOLERANCE = 1e-4

# (prefill tokens, decode steps after it)
CASES = [(1, 0), (7, 0), (64, 0), (64, 32)]


def relative_error(ours, ref):
    return float(np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))


def run_case(model_dir, weights, tokens, prefill, decodes, reference, out_path):
    used = tokens[:prefill + decodes]
    testlib.check_run([testlib.bin("tfm-logits"), "--model", model_dir, "--weights", weights,
                       "--tokens", ",".join(map(str, used)), "--prefill", str(prefill),
                       "--out", out_path])
    ours = np.load(out_path)
    vocab = reference.shape[1]
    if ours.shape != (1 + decodes, vocab) or ours.dtype != np.float32:
        raise AssertionError(f"{out_path}: found {ours.dtype} {ours.shape}, "
                             f"expected float32 {(1 + decodes, vocab)}")
    worst = 0.0
    failures = []
    for row in range(1 + decodes):
        position = prefill - 1 + row
        error = relative_error(ours[row].astype(np.float64), reference[position])
        worst = max(worst, error)
        if not np.isfinite(error) or error > TOLERANCE:
            failures.append(f"row {row} (position {position}): relative error {error:.3e}")
    label = f"prefill {prefill}" + (f" + {decodes} decodes" if decodes else "")
    print(f"{label}: max relative error {worst:.3e} over {1 + decodes} rows "
          f"({'ok' if not failures else 'FAIL'})", flush=True)
    for failure in failures:
        print(f"  {failure}", flush=True)
    return not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="Llama config.json of the shape")
    parser.add_argument("--seed", type=int, default=1, help="seed of weights and tokens")
    args = parser.parse_args()

    shape = os.path.splitext(os.path.basename(args.config))[0]
    work = testlib.work_dir(f"reference/{shape}")
    config = load_config(args.config)
    longest = max(p + k for p, k in CASES)
    if longest > config.context_length:
        print(f"FAIL: {args.config}: max_position_embeddings is {config.context_length}, "
              f"the cases need {longest} positions")
        return 1

    weights = os.path.join(work, f"weights-seed{args.seed}.bin")
    testlib.check_run([testlib.bin("tfm-weights"), args.config, "-o", weights,
                       "--seed", str(args.seed)])
    model_dir = testlib.compile_model(args.config, os.path.join(work, "model"))

    tokens = torch.randint(0, config.vocab_size, (longest,),
                           generator=torch.Generator().manual_seed(args.seed)).tolist()
    oracle = LlamaOracle(config, read_llama2c(weights, config))
    reference = oracle.logits(tokens).numpy()  # causal: every case is a prefix of this run

    print(f"{shape}: seed {args.seed}, tolerance {TOLERANCE:g}", flush=True)
    results = [run_case(model_dir, weights, tokens, p, k, reference,
                        os.path.join(work, f"logits-p{p}-k{k}.npy")) for p, k in CASES]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
