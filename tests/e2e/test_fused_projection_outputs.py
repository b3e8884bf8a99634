"""A kernel's single-row projection outputs share one parallel loop
(Schedules/CpuFast/Dispatch.cpp, compute_with): decode_attn_in forks the threads once
for its query, key and value, not once each. Halide names each parallel
loop's closure after the output whose loop it runs, with `fused` where
several outputs share it; the 15M Llama's decode_attn_in, compiled for
AVX2, has only fused closures, and every other decode projection kernel
(one output each) has none. Only compiles: any x86 machine with binutils'
nm runs it."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

TARGET = "x86-64-linux-sse41-avx-f16c-fma-avx2"
PROJECTIONS = ("decode_attn_in", "decode_attn_out", "decode_ffn_in", "decode_ffn_out",
               "decode_logits")


def parallel_closures(object_path, kernel):
    """Names of the parallel loop closures a kernel's object file defines."""
    symbols = testlib.check_run(["nm", "--defined-only", object_path])
    return sorted(set(re.findall(r"\b(" + kernel + r"_par_for_\w+)", symbols)))


def main():
    work = testlib.work_dir("e2e-fused-projection-outputs")
    model = testlib.compile_model(
        testlib.source_path("configs/llama-15m.json"), os.path.join(work, "llama-15m"),
        ["--target", TARGET, "--kernel-cache", "none"])
    for kernel in PROJECTIONS:
        closures = parallel_closures(os.path.join(model, "obj", kernel + ".o"), kernel)
        print(f"{kernel}: {closures}")
        assert closures, f"{kernel}: no parallel loop"
        fused = [c for c in closures if "_fused_" in c]
        if kernel == "decode_attn_in":
            assert fused == closures, f"{kernel}: outputs in loops of their own: {closures}"
        else:
            assert not fused, f"{kernel}: one output, yet fused loops: {closures}"
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
