"""Logits of a compiled model against the float64 oracle, for one model shape
and one weight file format.

usage: compare_logits.py --config CONFIG.json [--format llama2c|safetensors|gguf]
                         [--dtype TYPE] [--read-as f32|dtype|file]
                         [--kv-dtype f32|f16|bf16] [--schedule NAME] [--shards N]
                         [--seed S] [--skip-passes PASSES] [--context N]
                         [--activations int8|bf16 --tolerance T] [--target TARGET]

Compiles the config (tfmc), writes random weights in the format (tfm-weights),
in the type --dtype names (f32, f16, bf16, or for GGUF q8_0, q4_0, q4_k, q5_k,
q6_k, q4_k_m, q5_k_m). --read-as says how the compiled kernels read them:
  f32    kernels read f32; the loader converts what the file stores;
  dtype  `tfmc --dtype TYPE`: kernels read that type in place, and the file
         is written as the compiled manifest says;
  file   the file is written first, `tfmc --weights-like FILE` reads each
         tensor as the file stores it (k-quant files fall back to q8_0 or f16
         for rows that hold no whole blocks, as llama.cpp's do).
--kv-dtype compiles a KV cache of that type (f32 read-as only); the oracle
rounds its keys and values to the same type as it stores them. --context N
compiles `tfmc --context N`, past the config's own context (ALiBi and
sinusoidal positions have no table to run out of), and the cases reach its
end: a prefill to N - 32 then 32 decodes, and a score of all N tokens.
picks a seeded random token sequence and runs the probe tfm-logits for each
case: a prefill of P tokens, then K single-token decodes; and one call of the
score entry point over all tokens. Each row of the probe's output must be
within a relative error max|ours - ref| / max|ref| <= 1e-4 of the oracle's
logits at the same position; with --activations int8 or bf16 (tfmc's 8-bit
inputs for products with block-format weights, or bf16 inputs for products
with bf16 weights, which are no longer exact) every row is held to
--tolerance instead, against the same f32 oracle, and must
be further from it than 1e-4 somewhere (else the option did nothing).
The oracle (llama_oracle.py, gpt2_oracle.py, family_oracle.py or
modern_oracle.py, by the config's model_type)
reads the same file with its own reader (weight_files.py), under the
format's own tensor names and layouts, and decodes block formats itself, so
the oracle runs on the dequantized weights.
"""

import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import family_oracle  # noqa: E402
import gpt2_oracle  # noqa: E402
import llama_oracle  # noqa: E402
import modern_oracle  # noqa: E402
import testlib  # noqa: E402
import weight_files  # noqa: E402

TOLERANCE = 1e-4

# (prefill tokens, decode steps after it); prefill 0: score that many tokens
CASES = [(1, 0), (7, 0), (64, 0), (64, 32), (0, 96)]


def relative_error(ours, ref):
    return float(np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))


def model_type(config_path):
    with open(config_path) as f:
        return json.load(f).get("model_type")


def make_oracle(config_path, weight_format, weights, cache_dtype):
    """The oracle for the config's family, fed by an independent reader."""
    with open(config_path) as f:
        if modern_oracle.handles(json.load(f)):
            raw = modern_oracle.load_config(config_path)
            if weight_format == "gguf":
                tensors = modern_oracle.hf_names_from_gguf(weight_files.read_gguf(weights)[1], raw)
            else:
                tensors = weight_files.read_safetensors(weights)
            config = argparse.Namespace(vocab_size=raw["vocab_size"],
                                        context_length=raw["max_position_embeddings"])
            return config, modern_oracle.ModernOracle(raw, tensors, cache_dtype=cache_dtype)
    if model_type(config_path) in family_oracle.FAMILIES:
        raw = family_oracle.load_config(config_path)
        if weight_format == "gguf":
            tensors = family_oracle.hf_names_from_gguf(weight_files.read_gguf(weights)[1], raw)
        else:
            tensors = weight_files.read_safetensors(weights)
        context = (raw.get("context_length") or raw.get("max_position_embeddings")
                   or raw.get("max_seq_len") or raw.get("seq_length") or 2048)
        config = argparse.Namespace(vocab_size=raw["vocab_size"], context_length=context)
        return config, family_oracle.FamilyOracle(raw, tensors, cache_dtype=cache_dtype)
    if model_type(config_path) == "gpt2":
        config = gpt2_oracle.load_config(config_path)
        if weight_format == "gguf":
            tensors = gpt2_oracle.hf_names_from_gguf(weight_files.read_gguf(weights)[1])
        else:
            tensors = weight_files.read_safetensors(weights)
        return config, gpt2_oracle.Gpt2Oracle(config, tensors, cache_dtype=cache_dtype)
    config = llama_oracle.load_config(config_path)
    if weight_format == "llama2c":
        tensors = llama_oracle.read_llama2c(weights, config)
        return config, llama_oracle.LlamaOracle(config, tensors, cache_dtype=cache_dtype)
    if weight_format == "gguf":
        tensors = weight_files.read_gguf(weights)[1]
        return config, llama_oracle.LlamaOracle(
            config, llama_oracle.weights_from_names(tensors, config, "gguf"),
            cache_dtype=cache_dtype)
    tensors = weight_files.read_safetensors(weights)
    return config, llama_oracle.LlamaOracle(
        config, llama_oracle.weights_from_names(tensors, config, "hf"), rope_style="half",
        cache_dtype=cache_dtype)


def context_length(config):
    return getattr(config, "context_length", None) or config.n_positions


def run_case(model_dir, weights, tokens, prefill, decodes, reference, out_path,
             tolerance=TOLERANCE):
    """prefill 0: one score call over tokens[:decodes] (every row checked).
    Returns whether every row is within `tolerance`, and the largest error."""
    used = tokens[:prefill + decodes]
    testlib.check_run([testlib.bin("tfm-logits"), "--model", model_dir, "--weights", weights,
                       "--tokens", ",".join(map(str, used)), "--prefill", str(prefill),
                       "--out", out_path])
    ours = np.load(out_path)
    vocab = reference.shape[1]
    rows = decodes if prefill == 0 else 1 + decodes
    if ours.shape != (rows, vocab) or ours.dtype != np.float32:
        raise AssertionError(f"{out_path}: found {ours.dtype} {ours.shape}, "
                             f"expected float32 {(rows, vocab)}")
    worst = 0.0
    failures = []
    for row in range(rows):
        position = row if prefill == 0 else prefill - 1 + row
        error = relative_error(ours[row].astype(np.float64), reference[position])
        worst = max(worst, error)
        if not np.isfinite(error) or error > tolerance:
            failures.append(f"row {row} (position {position}): relative error {error:.3e}")
    if prefill == 0:
        label = f"score {decodes}"
    else:
        label = f"prefill {prefill}" + (f" + {decodes} decodes" if decodes else "")
    print(f"{label}: max relative error {worst:.3e} over {rows} rows "
          f"({'ok' if not failures else 'FAIL'})", flush=True)
    for failure in failures:
        print(f"  {failure}", flush=True)
    return not failures, worst


def skipped_name(passes):
    """A folder name for a --skip-passes list: the names joined, or for a
    list too long for the file names built on it (255 bytes), their count
    and a digest."""
    joined = passes.replace(",", "+")
    if len(joined) <= 80:
        return joined
    digest = hashlib.sha256(passes.encode()).hexdigest()[:12]
    return f"{passes.count(',') + 1}-passes-{digest}"


def write_weights(args, model_dir, work):
    """tfm-weights output for the format; returns the path the loader takes.
    model_dir None: written from the config (--read-as file)."""
    # Per model folder: tests of one shape may run at once and must not write
    # one file together.
    name = (f"weights-{args.format}-{args.dtype}-{args.shards}-seed{args.seed}-"
            f"{os.path.basename(model_dir or 'from-config')}")
    cmd = [testlib.bin("tfm-weights"), "--seed", str(args.seed)]
    if args.format == "llama2c":
        path = os.path.join(work, name + ".bin")
        cmd += [args.config, "-o", path]
    else:
        path = os.path.join(work, name + (".gguf" if args.format == "gguf" else ""))
        cmd += [args.config] if model_dir is None else ["--model", model_dir]
        cmd += ["--format", args.format, "-o", path]
        if args.read_as != "dtype":  # else the manifest's types
            cmd += ["--dtype", args.dtype]
        if args.format == "safetensors":
            cmd += ["--shards", str(args.shards)]
            path = os.path.join(path, "model.safetensors.index.json" if args.shards > 1
                                else "model.safetensors")
    testlib.check_run(cmd)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="config.json of the shape")
    parser.add_argument("--format", default="llama2c", choices=["llama2c", "safetensors", "gguf"])
    parser.add_argument("--dtype", default="f32",
                        choices=["f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k",
                                 "q4_k_m", "q5_k_m"])
    parser.add_argument("--read-as", default="f32", choices=["f32", "dtype", "file"],
                        help="what the compiled kernels read (see above)")
    parser.add_argument("--schedule", help="compile with tfmc --schedule NAME, or "
                        "kernel=NAME,... (then checked in manifest.json)")
    parser.add_argument("--attention", help="compile with tfmc --attention ALGORITHM")
    parser.add_argument("--target", choices=sorted(testlib.TARGET_CPU_FLAGS),
                        help="compile with tfmc --target TARGET (default: host); skipped on "
                             "a CPU that lacks its features")
    parser.add_argument("--kv-dtype", default="f32", choices=["f32", "f16", "bf16"],
                        help="what the KV cache holds (tfmc --kv-dtype); the oracle rounds "
                             "its keys and values alike")
    parser.add_argument("--prefill-chunk", type=int, metavar="N",
                        help="compile with tfmc --prefill-chunk N: sliding-window caches of "
                             "window - 1 + N rows when that is under the context")
    parser.add_argument("--shards", type=int, default=1, help="safetensors shards")
    parser.add_argument("--seed", type=int, default=1, help="seed of weights and tokens")
    parser.add_argument("--skip-passes", metavar="PASSES",
                        help="compile with tfmc --skip-passes PASSES (a pipeline subset)")
    parser.add_argument("--context", type=int, metavar="N",
                        help="compile with tfmc --context N and run the cases to position N")
    parser.add_argument("--activations", choices=["int8", "bf16"],
                        help="compile with tfmc --activations int8 or bf16 (held to --tolerance)")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="the relative error allowed with --activations")
    args = parser.parse_args()
    if args.tolerance != TOLERANCE and not args.activations:
        parser.error("--tolerance applies to --activations only: exact runs are held to "
                     f"{TOLERANCE:g}")
    if args.target:
        testlib.skip_unless_cpu_runs(args.target)
    if args.target == "opencl":
        testlib.require_opencl_platform()
    cases = CASES if not args.context else [(1, 0), (args.context - 32, 32), (0, args.context)]

    shape = os.path.splitext(os.path.basename(args.config))[0]
    work = testlib.work_dir(f"reference/{shape}")
    longest = max(p + k for p, k in cases)
    chosen = (("--schedule", args.schedule) if args.schedule else ()) + \
        (("--attention", args.attention) if args.attention else ()) + \
        (("--activations", args.activations) if args.activations else ()) + \
        (("--target", args.target) if args.target else ()) + \
        (("--prefill-chunk", str(args.prefill_chunk)) if args.prefill_chunk else ())
    chunk = f"chunk{args.prefill_chunk}" if args.prefill_chunk else None

    def compile_as(name, *tfmc_args):
        """The config compiled into work/<name> (plus the schedule's, the
        attention's, the activations', the target's and the chunk's names)."""
        folder = name + "".join(f"-{c}" for c in (args.schedule, args.attention,
                                                    args.activations, args.target, chunk) if c)
        return testlib.compile_model(args.config, os.path.join(work, folder), tfmc_args + chosen)

    if args.context:
        model_dir = compile_as(f"model-context-{args.context}", "--context", str(args.context))
        weights = write_weights(args, model_dir, work)
    elif args.skip_passes:
        model_dir = compile_as("model-skip-" + skipped_name(args.skip_passes),
                               "--skip-passes", args.skip_passes)
        weights = write_weights(args, model_dir, work)
    elif args.read_as == "dtype":
        model_dir = compile_as("model-" + args.dtype, "--dtype", args.dtype)
        weights = write_weights(args, model_dir, work)
    elif args.read_as == "file":
        weights = write_weights(args, None, work)
        model_dir = compile_as(f"model-like-{args.format}-{args.dtype}", "--weights-like", weights)
    elif args.kv_dtype != "f32":
        model_dir = compile_as("model-kv-" + args.kv_dtype, "--kv-dtype", args.kv_dtype)
        weights = write_weights(args, model_dir, work)
    else:
        model_dir = compile_as("model")
        weights = write_weights(args, model_dir, work)
    if args.schedule and "=" in args.schedule:
        # A per-kernel list reaches the library: each named kernel is
        # compiled with its schedule (a list parsed and ignored would
        # still pass the logits, every kernel then compiled as fast).
        with open(os.path.join(model_dir, "manifest.json")) as f:
            compiled = {k["kernel"]: k["schedule"] for k in json.load(f)["kernels"]}
        for entry in args.schedule.split(","):
            kernel, name = entry.split("=")
            if compiled.get(kernel) != name:
                print(f"FAIL: manifest.json: kernel {kernel} compiled with schedule "
                      f"{compiled.get(kernel)}, expected {name} (--schedule {args.schedule})")
                return 1
    config, oracle = make_oracle(args.config, args.format, weights, args.kv_dtype)
    if args.context and args.context <= context_length(config):
        print(f"FAIL: --context {args.context} is not past the config's {context_length(config)}")
        return 1
    if longest > (args.context or context_length(config)):
        print(f"FAIL: {args.config}: the context is {context_length(config)}, "
              f"the cases need {longest} positions")
        return 1

    tokens = torch.randint(0, config.vocab_size, (longest,),
                           generator=torch.Generator().manual_seed(args.seed)).tolist()
    reference = oracle.logits(tokens).numpy()  # causal: every case is a prefix of this run

    tolerance = args.tolerance if args.activations else TOLERANCE
    print(f"{shape} from {args.format} ({args.dtype} read as {args.read_as}, {args.shards} "
          f"shard(s)): seed {args.seed}, tolerance {tolerance:g}"
          + (f" ({args.activations} activations)" if args.activations else ""), flush=True)
    # Per weight file and model folder, as the weights: tests of one shape
    # run at once, and one reading another's logits compares the wrong model.
    run_name = (f"logits-{args.format}-{args.dtype}-{args.read_as}-{args.shards}-"
                f"seed{args.seed}-{os.path.basename(model_dir)}")
    outcomes = [run_case(model_dir, weights, tokens, p, k, reference,
                         os.path.join(work, f"{run_name}-p{p}-k{k}.npy"), tolerance)
                for p, k in cases]
    results = [ok for ok, _ in outcomes]
    if args.activations:
        worst = max(error for _, error in outcomes)
        quantized = worst > TOLERANCE
        print(f"{args.activations} activations: largest error {worst:.3e} "
              f"({'ok' if quantized else f'FAIL: within {TOLERANCE:g}, as if the inputs were f32'})",
              flush=True)
        results.append(quantized)
    if args.kv_dtype != "f32":
        results.append(cache_is_rounded(args, weights, tokens, reference,
                                        os.path.join(work, f"{run_name}-p0-k96.npy")))
    testlib.discard(os.path.dirname(weights) if args.format == "safetensors" else weights)
    return 0 if all(results) else 1


def cache_is_rounded(args, weights, tokens, reference, scored_path):
    """The tolerance alone cannot tell a rounded cache from an f32 one (their
    logits differ by about 1e-5): the scored logits must also be several
    times closer to the oracle that rounds its cache than to one that does
    not, so that a cache left in f32 fails."""
    _, unrounded = make_oracle(args.config, args.format, weights, "f32")
    plain = unrounded.logits(tokens).numpy()
    ours = np.load(scored_path).astype(np.float64)
    rounded_error = max(relative_error(ours[i], reference[i]) for i in range(len(ours)))
    plain_error = max(relative_error(ours[i], plain[i]) for i in range(len(ours)))
    ok = rounded_error * 4 <= plain_error
    print(f"cache rounding: error {rounded_error:.3e} against the {args.kv_dtype} cache oracle, "
          f"{plain_error:.3e} against an f32 cache ({'ok' if ok else 'FAIL'})", flush=True)
    return ok


if __name__ == "__main__":
    sys.exit(main())
