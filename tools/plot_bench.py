#!/usr/bin/python3
"""Charts of a `tfm-bench --config` run, drawn with matplotlib (Debian's
python3-matplotlib).

    tools/plot_bench.py tfm-bench-out/llama-15m/results.json

writes beside the JSON:
  kernels.png   each kernel's median time per call, the schedules side by
                side (log scale: schedules differ by orders of magnitude);
  roofline.png  every kernel and schedule at its arithmetic intensity
                (FLOPs per byte read) and GFLOP/s, under this machine's
                roofline as tfm-bench measured it: the f32 FMA peak (and
                the narrower dot products' where the CPU has them, which
                prefill with rounded inputs is held against), and the read
                bandwidth of memory, of the largest working set the cache
                holds, and of the smallest (1 MiB). Every point is named by
                its kernel, every ceiling on the plot where it ends.
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def schedules_of(results):
    seen = []
    for row in results["kernels"]:
        if row["schedule"] not in seen:
            seen.append(row["schedule"])
    return seen


def plot_kernels(results, path):
    schedules = schedules_of(results)
    kernels = []
    for row in results["kernels"]:
        if row["kernel"] not in kernels:
            kernels.append(row["kernel"])
    ms = {(r["kernel"], r["schedule"]): r["median_ms"] for r in results["kernels"]}
    width = 0.8 / len(schedules)
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(kernels)), 5))
    for i, schedule in enumerate(schedules):
        xs = [k + (i - (len(schedules) - 1) / 2) * width for k in range(len(kernels))]
        ys = [ms.get((kernel, schedule), 0) or float("nan") for kernel in kernels]
        ax.bar(xs, ys, width, label=schedule)
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, rotation=45, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("median time per call (ms, log scale)")
    ax.set_title(f"{os.path.basename(results['config'])}: kernels under each schedule "
                 f"({results['threads']} threads, {results['rounds']} rounds)")
    ax.legend()
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_roofline(results, path):
    roof = results["roofline"]
    peak = roof["fma_gflop_s"]
    memory = roof["reads"][-1]["gb_s"]
    cached = [r for r in roof["reads"] if r["bytes"] <= roof["cache_bytes"]]
    cache = cached[-1]["gb_s"] if cached else memory
    # A kernel with too few profiler samples has no rate (gflop_s null).
    points = [r for r in results["kernels"]
              if r["bytes_per_call"] > 0 and r["flops_per_call"] > 0 and r["gflop_s"] is not None]
    intensities = [r["flops_per_call"] / r["bytes_per_call"] for r in points]
    lo = min(intensities + [0.05]) / 2
    hi = max(intensities + [peak / memory]) * 4
    fig, ax = plt.subplots(figsize=(10, 7))
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    smallest = roof["reads"][0]
    # Each ceiling its own colour and line, named on the plot where it
    # ends, so that none is told apart by the legend alone.
    slopes = ((memory, f"memory {memory:.0f} GB/s", "tab:blue", "-"),
              (cache, f"cache (up to {roof['cache_bytes'] >> 20} MiB) {cache:.0f} GB/s",
               "tab:green", "--"),
              (smallest["gb_s"], f"cache ({smallest['bytes'] >> 20} MiB) "
                                 f"{smallest['gb_s']:.0f} GB/s", "tab:olive", ":"))
    for gbs, label, color, style in slopes:
        ax.plot(xs, [min(peak, gbs * x) for x in xs], color=color, linestyle=style,
                label=f"read bandwidth: {label}")
        knee = peak / gbs  # where the slope meets the FMA peak
        x = max(lo * 1.5, min(knee / 3, hi))
        ax.text(x, gbs * x * 1.15, label, color=color, fontsize=7, rotation=30,
                ha="center", va="bottom")
    peaks = [(peak, f"f32 FMA peak {peak:.0f} GFLOP/s", "black", "-.")]
    for key, name, color in (("int8_dot_gop_s", "int8 vpdpbusd", "tab:red"),
                             ("bf16_dot_gflop_s", "bf16 vdpbf16ps", "tab:purple"),
                             ("amx_int8_gop_s", "int8 AMX tiles", "tab:orange"),
                             ("amx_bf16_gflop_s", "bf16 AMX tiles", "tab:brown")):
        if roof.get(key, 0) > 0:
            peaks.append((roof[key], f"{name} peak {roof[key]:.0f} GOP/s", color, "--"))
    for value, label, color, style in peaks:
        ax.axhline(value, color=color, linestyle=style, linewidth=1, label=label)
        ax.text(hi, value * 1.04, label, color=color, fontsize=7, ha="right", va="bottom")
    markers = "osD^v<>P*X"
    for i, schedule in enumerate(schedules_of(results)):
        mine = [r for r in points if r["schedule"] == schedule]
        mx = [r["flops_per_call"] / r["bytes_per_call"] for r in mine]
        my = [r["gflop_s"] for r in mine]
        ax.scatter(mx, my, label=schedule, s=26, marker=markers[i % len(markers)])
        # Each point named by its kernel, so that a slow one is found.
        for row, x, y in zip(mine, mx, my):
            ax.annotate(row["kernel"], (x, y), xytext=(4, 3), textcoords="offset points",
                        fontsize=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOPs per byte of weights and KV cache read)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"{os.path.basename(results['config'])}: kernels against this machine's "
                 f"roofline ({roof['vector_isa']}, {results['threads']} threads)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="results.json written by tfm-bench --config")
    args = parser.parse_args()
    with open(args.results) as f:
        results = json.load(f)
    folder = os.path.dirname(os.path.abspath(args.results))
    for name, plot in (("kernels.png", plot_kernels), ("roofline.png", plot_roofline)):
        path = os.path.join(folder, name)
        plot(results, path)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
