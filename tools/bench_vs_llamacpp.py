#!/usr/bin/python3
"""Prefill and decode speed of tfmc and llama.cpp, side by side, on the same
weight file in the same run.

    tools/bench_vs_llamacpp.py --rounds 5 \\
        configs/gpt2-small.json=/tmp/peers/models/gguf/rand-gpt2-124m-f32.gguf \\
        configs/llama-110m.json=/tmp/peers/models/gguf/rand-llama-110m-f32.gguf

Each CONFIG=GGUF pair is compiled with tfmc once (into --work), its kernels
reading every tensor in the file's own type (tfmc --weights-like), then the two
engines run alternately, one run each per round, so that the machine's noise
falls on both alike: tfm-bench (a prefill of --prompt tokens, then --decode
single-token steps, after --depth tokens) and llama-bench (-p PROMPT -n
DECODE -d DEPTH). The table gives
the median of the rounds and tfmc's ratio to llama.cpp. An encoder (BERT)
is timed on its prompt alone: --decode 0 (tfm-bench times its encode), with
--llama-bench-arg=-embd --llama-bench-arg=1 for llama-bench. An
encoder-decoder (T5), which llama-bench does not run, with
--encoder-decoder: the prompt is its encoded source, then --decode steps,
on llama.cpp's side by tools/peers/llama_t5_bench.cpp, built here against
the peers' llama.cpp as ../shared/peers/build.sh builds its programs. llama.cpp is the one
../shared/peers/build.sh builds; nothing of it is part of this project.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{done.stderr}")
    return done.stdout


def tfm_bench(bin_dir, model, weights, args):
    out = run([os.path.join(bin_dir, "tfm-bench"), "--rates", "--weights", weights, "--threads",
               str(args.threads), "--prompt", str(args.prompt), "--decode", str(args.decode),
               "--depth", str(args.depth), "--repeat", "1", *args.tfm_bench_arg, model])
    match = re.search(r"^rates ([0-9.e+-]+) ([0-9.e+-]+)$", out, re.M)
    if not match:
        sys.exit(f"bench: no rates for {model} in tfm-bench's output:\n{out}")
    return float(match.group(1)), float(match.group(2))


def llama_t5_bench(weights, args):
    """llama.cpp's encode and decode rates on an encoder-decoder GGUF: the
    peer program, built when missing or older than its source."""
    source = os.path.join(ROOT, "tools", "peers", "llama_t5_bench.cpp")
    peers = os.environ.get("PEERS", "/tmp/peers")
    program = os.path.join(peers, "llama_t5_bench")
    if not os.path.exists(program) or os.path.getmtime(program) < os.path.getmtime(source):
        llama = os.path.join(peers, "llama.cpp")
        run(["g++", "-O2", "-std=c++17", source, "-I" + os.path.join(llama, "include"),
             "-I" + os.path.join(llama, "ggml", "include"),
             "-L" + os.path.join(llama, "build", "bin"), "-lllama", "-lggml", "-lggml-base",
             "-Wl,-rpath," + os.path.join(llama, "build", "bin"), "-o", program])
    out = run([program, weights, str(args.prompt), str(args.decode), str(args.threads), "1"])
    match = re.search(r"^rates ([0-9.e+-]+) ([0-9.e+-]+)$", out, re.M)
    if not match:
        sys.exit(f"bench: no rates in llama_t5_bench's output:\n{out}")
    return float(match.group(1)), float(match.group(2))


def llama_bench(path, weights, args):
    out = run([path, "-m", weights, "-p", str(args.prompt), "-n", str(args.decode),
               "-d", str(args.depth), "-t", str(args.threads), "-r", "1", "-o", "json",
               *args.llama_bench_arg])
    results = json.loads(out)
    prefill = next(r["avg_ts"] for r in results if r["n_prompt"] > 0 and r["n_gen"] == 0)
    decode = next((r["avg_ts"] for r in results if r["n_gen"] > 0 and r["n_prompt"] == 0), 0.0)
    return prefill, decode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="CONFIG=GGUF")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--encoder-decoder", action="store_true",
                        help="the files are encoder-decoders (T5): llama.cpp's side by "
                             "tools/peers/llama_t5_bench.cpp")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--decode", type=int, default=64)
    parser.add_argument("--depth", type=int, default=0,
                        help="tokens in the context before the timed prefill and decode "
                             "(llama-bench -d)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="where tfmc and tfm-bench are (default: build/bin)")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench"),
                        help="where the compiled models go")
    parser.add_argument("--llama-bench", default=os.path.join(
        os.environ.get("PEERS", "/tmp/peers"), "llama.cpp", "build", "bin", "llama-bench"))
    parser.add_argument("--tfmc-arg", action="append", default=[],
                        help="an extra tfmc argument (repeatable)")
    parser.add_argument("--tfm-bench-arg", action="append", default=[],
                        help="an extra tfm-bench argument (repeatable), e.g. --no-mmap")
    parser.add_argument("--llama-bench-arg", action="append", default=[],
                        help="an extra llama-bench argument (repeatable), e.g. "
                             "--llama-bench-arg=-mmp --llama-bench-arg=0 beside --no-mmap")
    args = parser.parse_args()

    models = []
    for pair in args.pairs:
        config, _, weights = pair.partition("=")
        if not weights:
            sys.exit(f"bench: '{pair}': expected CONFIG=GGUF")
        name = (os.path.splitext(os.path.basename(config))[0] + " " +
                os.path.splitext(os.path.basename(weights))[0])
        out = os.path.join(args.work, name.replace(" ", "-"))
        run([os.path.join(args.bin, "tfmc"), config, "-o", out, "--weights-like", weights,
             *args.tfmc_arg])
        models.append((name, out, weights))

    rows = {name: {"tfmc": ([], []), "llama.cpp": ([], [])} for name, _, _ in models}
    for round_ in range(args.rounds):
        for name, out, weights in models:
            for engine in ("tfmc", "llama.cpp"):
                prefill, decode = (tfm_bench(args.bin, out, weights, args) if engine == "tfmc"
                                   else llama_t5_bench(weights, args) if args.encoder_decoder
                                   else llama_bench(args.llama_bench, weights, args))
                rows[name][engine][0].append(prefill)
                rows[name][engine][1].append(decode)
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)

    print(f"{args.threads} threads, prefill {args.prompt} tokens, decode {args.decode} steps, "
          f"at depth {args.depth}; "
          f"medians of {args.rounds} alternating rounds (tok/s)")
    print(f"{'model':<36} {'engine':<10} {'prefill':>9} {'decode':>9}")
    for name, _, _ in models:
        medians = {}
        for engine in ("tfmc", "llama.cpp"):
            prefill, decode = rows[name][engine]
            medians[engine] = (statistics.median(prefill), statistics.median(decode))
            # Two decimals: a 7B model decodes at a few tokens a second.
            print(f"{name:<36} {engine:<10} {medians[engine][0]:>9.2f} {medians[engine][1]:>9.2f}"
                  f"   decode per round: {' '.join(f'{d:.2f}' for d in decode)}")
        ratio = [t / l if l else 0.0 for t, l in zip(medians["tfmc"], medians["llama.cpp"])]
        print(f"{name:<36} {'ratio':<10} {ratio[0]:>8.2f}x {ratio[1]:>8.2f}x")


if __name__ == "__main__":
    main()
