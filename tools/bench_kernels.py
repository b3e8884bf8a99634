#!/usr/bin/python3
"""Each kernel's time per call, for models compiled with tfmc --profile,
side by side.

    build/bin/tfmc --profile a.json -o build/prof/a
    build/bin/tfmc --profile b.json -o build/prof/b
    tools/bench_kernels.py --prompt 1024 --decode 1 --rounds 5 \\
        build/prof/a=a.gguf build/prof/b=b.gguf

Every round runs tfm-bench once per MODEL=WEIGHTS pair, alternately, so that
the machine's noise falls on all alike. A library compiled with --profile
carries Halide's profiler, which prints when the process exits each kernel's
(pipeline's) calls and time per call; the time is sampled every
millisecond, so a kernel needs many milliseconds per run to be measured
well (the table gives the samples of the median round). The table lists
the median over rounds of every kernel's time per call and, for each model
after the first, its ratio to the first.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT_LINE = re.compile(r"^ total time: ([0-9.]+) ms\s+samples: (\d+)\s+runs: (\d+)\s+"
                         r"time/run: ([0-9.]+) ms")


def kernel_times(output):
    """{kernel: (time per run in ms, samples)} from Halide's profiler report."""
    times, lines = {}, output.splitlines()
    for name, line in zip(lines, lines[1:]):
        match = REPORT_LINE.match(line)
        if match and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            times[name] = (float(match.group(4)), int(match.group(2)))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="MODEL=WEIGHTS")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5, help="tfm-bench --repeat per round")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--decode", type=int, default=64)
    parser.add_argument("--depth", type=int, default=0,
                        help="tokens in the context before the timed prefill (tfm-bench --depth)")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--kernel", action="append", default=[],
                        help="list only kernels whose name contains this (repeatable)")
    args = parser.parse_args()

    models = [pair.partition("=")[::2] for pair in args.pairs]
    for model, weights in models:
        if not weights:
            sys.exit(f"bench_kernels: '{model}': expected MODEL=WEIGHTS")
    rounds = {model: [] for model, _ in models}
    for _ in range(args.rounds):
        for model, weights in models:
            done = subprocess.run(
                [os.path.join(args.bin, "tfm-bench"), "--rates", "--weights", weights, "--threads",
                 str(args.threads), "--prompt", str(args.prompt), "--decode", str(args.decode),
                 "--depth", str(args.depth), "--repeat", str(args.repeat), model],
                capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"bench_kernels: tfm-bench {model} failed:\n{done.stderr}")
            times = kernel_times(done.stdout + done.stderr)
            if not times:
                sys.exit(f"bench_kernels: {model}: no profiler report; compile it with "
                         "tfmc --profile")
            rounds[model].append(times)

    first = models[0][0]
    kernels = [k for k in rounds[first][0]
               if not args.kernel or any(part in k for part in args.kernel)]
    names = [os.path.basename(model.rstrip("/")) for model, _ in models]
    width = max(22, max(len(n) for n in names) * 2 + 3)
    header = f"{'kernel':24}" + "".join(f"{n + ' ms/call':>{width}}" for n in names)
    header += "".join(f"{n + '/' + names[0]:>{width}}" for n in names[1:])
    print(header)
    for kernel in kernels:
        medians, row = {}, f"{kernel:24}"
        for model, _ in models:
            runs = sorted((r[kernel] for r in rounds[model] if kernel in r),
                          key=lambda t: t[0])
            if not runs:
                row += f"{'-':>{width}}"
                continue
            samples = runs[len(runs) // 2][1]
            medians[model] = statistics.median(t[0] for t in runs)
            row += f"{medians[model]:>{width - 9}.3f} ({samples:>6})"
        for model, _ in models[1:]:
            if medians.get(first) and model in medians:
                row += f"{medians[model] / medians[first]:>{width}.3f}"
        print(row)
    print(f"medians of {args.rounds} rounds of tfm-bench --repeat {args.repeat}: prefill "
          f"{args.prompt} tokens, then {args.decode} decode steps, at depth {args.depth}, "
          f"{args.threads} threads; "
          "(samples of the median round)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
