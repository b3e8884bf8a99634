#!/usr/bin/python3
"""tfmc's compile time against the size of a .mlir module: modules whose
entries each hold a chain of N elementwise ops between the embedding and
the tied head, compiled whole (every kernel, the driver, the link) with no
kernel cache, for each N; first with the ops left to the fusion pass, then
written inside one tfm.fusion region.

    tools/bench_compile_time.py --sizes 250,500,1000,2000 --rounds 3

The fusion pass joins a chain to its producer's kernel until the kernel
holds the most ops a kernel may (tfm/Program/Program.h's kMaxKernelOps);
the rest are kernels of their own, all alike, compiled once. A region
written larger is refused. The table gives each module's size, the median
seconds, seconds per thousand ops, and whether tfmc compiled or refused it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VOCAB, DIM, CONTEXT = 512, 64, 128
CONFIG = {
    "activation": "silu", "alibi": False, "alibi_max_bias": 0, "attn_out_bias": False,
    "bos_token_id": 1, "clip_qkv": 0, "context_length": CONTEXT, "dim": DIM,
    "embedding_norm": False, "embedding_scale": 1, "eos_token_id": 2, "family": "llama",
    "ffn_bias": False, "fused_qkv": False, "gated_ffn": True, "head_dim": 16,
    "hidden_dim": 128, "n_heads": 4, "n_kv_heads": 4, "n_layers": 1, "name": "chain",
    "norm": "rms_norm", "norm_bias": False, "norm_eps": 1e-05, "parallel_norms": 0,
    "parallel_residual": False, "positions": "rope", "post_norm": False, "qkv_bias": False,
    "rope_interleaved": True, "rope_scale": 1, "rope_theta": 10000, "rotary_dim": 16,
    "tied_embeddings": True, "vocab_size": VOCAB, "rope_freq_factors": [],
    "rope_short_factors": [], "rope_long_factors": [], "rope_original_context": 0,
    "rope_attn_factor": 1, "sliding_window": 0, "sliding_window_pattern": 0, "rope_local_theta": 0,
    "norm_weight_offset": 0, "sandwich_norms": False, "qk_norm": False,
    "fused_gate_up": False, "attn_scale": 0, "attn_softcap": 0, "final_softcap": 0,
    "eos_token_id_list": [], "architecture": "decoder", "position_offset": 0, "token_types": 0,
    "n_encoder_layers": 0, "source_length": 0, "relative_buckets": 0, "relative_max_distance": 0,
    "output_scale": 1, "decoder_start_token_id": -1, "output_bias": False}


def entry(name, rows, ops, fused):
    """One entry function: embedding, `ops` chained adds (each of the one
    before and the embedding; in one tfm.fusion region if `fused`), the
    tied head."""
    logits_rows = "?" if name == "score" else "1"
    row_type = f"tensor<{rows}x{DIM}xf32>"
    lines = [f'  func.func @{name}(%tokens: tensor<{rows}xi32>) -> '
             f'tensor<{logits_rows}x{VOCAB}xf32> attributes {{tfm.entry = "{name}"}} {{',
             f'    %w = tfm.weight @token_embd.weight : tensor<{VOCAB}x{DIM}xf32>',
             f'    %x0 = tfm.embedding %w, %tokens : tensor<{VOCAB}x{DIM}xf32>, tensor<{rows}xi32>']
    chain = [f'    %x{i} = tfm.add %x{i - 1}, %x0 : {row_type}' for i in range(1, ops + 1)]
    if fused:
        chain = ([f'    %chain = tfm.fusion -> {row_type} {{'] +
                 ["  " + line for line in chain] +
                 [f'      tfm.yield %x{ops} : {row_type}', '    }'])
    lines += chain
    last = "%chain" if fused else f"%x{ops}"
    if name == "prefill":
        lines.append(f'    %last = tfm.last_row {last} : tensor<?x{DIM}xf32>')
        last, rows = "%last", "1"
    lines += [f'    %y = tfm.linear {last}, %w : tensor<{rows}x{DIM}xf32>, '
              f'tensor<{VOCAB}x{DIM}xf32>',
              f'    return %y : tensor<{logits_rows}x{VOCAB}xf32>', '  }']
    return "\n".join(lines)


def module(ops, fused):
    config = json.dumps(json.dumps(CONFIG, separators=(",", ":"), sort_keys=True))
    return "\n".join([
        f'module @chain attributes {{tfm.config = {config}, tfm.context_length = {CONTEXT} : i64, '
        f'tfm.prefill_chunk = {CONTEXT} : i64, tfm.vocab_size = {VOCAB} : i64}} {{',
        f'  tfm.weight_decl @token_embd.weight : tensor<{VOCAB}x{DIM}xf32>',
        f'  tfm.cache_decl @blk.0.key : memref<{CONTEXT}x{DIM}xf32>',
        entry("prefill", "?", ops, fused), entry("decode", "1", ops, fused),
        entry("score", "?", ops, fused),
        "}"]) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,500,1000,2000",
                        help="elementwise ops per entry, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", default="avx2")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    args = parser.parse_args()

    sizes = [int(n) for n in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="tfm-compile-time-") as work:
        cases = [(n, fused) for fused in (False, True) for n in sizes]
        seconds, outcome = {case: [] for case in cases}, {}
        for _ in range(args.rounds):  # rounds alternate the cases: noise falls on all alike
            for n, fused in cases:
                path = os.path.join(work, f"chain-{n}{'-fused' if fused else ''}.mlir")
                with open(path, "w") as f:
                    f.write(module(n, fused))
                start = time.monotonic()
                result = subprocess.run([os.path.join(args.bin, "tfmc"), path, "-o",
                                         os.path.join(work, f"out-{n}"), "--target", args.target,
                                         "--kernel-cache", "none"],
                                        capture_output=True, text=True)
                seconds[(n, fused)].append(time.monotonic() - start)
                last_line = (result.stderr.strip().splitlines() or [""])[-1][:90]
                outcome[(n, fused)] = ("compiled" if result.returncode == 0
                                       else "refused: " + last_line)
                if result.returncode != 0 and not fused:
                    sys.exit(f"bench_compile_time: N={n}: tfmc failed:\n{result.stderr}")
        print(f"{'module':>26}  {'bytes':>8}  {'median s':>8}  {'s per 1000 ops':>14}  outcome")
        for n, fused in cases:
            name = f"{n} ops {'in one fusion' if fused else 'unfused'}"
            size = os.path.getsize(os.path.join(work, f"chain-{n}{'-fused' if fused else ''}.mlir"))
            median = statistics.median(seconds[(n, fused)])
            print(f"{name:>26}  {size:>8}  {median:>8.2f}  {1000 * median / n:>14.2f}  "
                  f"{outcome[(n, fused)]}")


if __name__ == "__main__":
    main()
