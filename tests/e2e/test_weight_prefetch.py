"""Decode's matrix-vector products prefetch their weights a few KiB ahead
(Schedules/CpuFast/Loops.cpp, prefetchWeightAhead), and the back end issues those
prefetches as prefetcht0 (compiler/lib/Codegen/PrefetchLocality.cpp):
Halide 14's own runtime would issue prefetchnta, which made decode slower
than no prefetch at all. The 15M Llama (its rows whole q8_0 blocks) is
compiled for AVX2 with weights that decode as they are read (f16, q8_0,
q8_0 against 8-bit activations): its decode projection kernels prefetch,
with prefetcht0 only. The fast-pf0 schedule and f32 weights (which stream
at memory's rate without them) prefetch nothing. An f16 row is prefetched
1 KiB ahead of the conversion that reads it, 4 KiB under fast-pf16-4k.
Only compiles: any x86 machine with binutils' objdump runs it."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

TARGET = "x86-64-linux-sse41-avx-f16c-fma-avx2"
PROJECTIONS = ("decode_attn_in", "decode_attn_out", "decode_ffn_in", "decode_ffn_out",
               "decode_logits")

CASES = {
    # name: (tfmc arguments, whether the decode projections prefetch)
    "f16": (["--dtype", "f16"], True),
    "f16-pf16-4k": (["--dtype", "f16", "--schedule", "fast-pf16-4k"], True),
    "q8_0": (["--dtype", "q8_0"], True),
    "q8_0-int8": (["--dtype", "q8_0", "--activations", "int8"], True),
    "q8_0-pf0": (["--dtype", "q8_0", "--schedule", "fast-pf0"], False),
    "f32": (["--dtype", "f32"], False),
}


def prefetches(model_dir):
    """{kernel: {instruction: count}} of the prefetch instructions in each
    decode projection kernel's object file."""
    found = {}
    for name in PROJECTIONS:
        path = os.path.join(model_dir, "obj", name + ".o")
        if not os.path.exists(path):
            continue
        found[name] = testlib.instruction_counts(path, r"prefetch\w*")
    return found


# name: bytes between an f16 row's conversion and the prefetch beside it
F16_DISTANCES = {"f16": 1024, "f16-pf16-4k": 4096}


def f16_prefetch_distances(object_path):
    """Bytes ahead of the f16 conversions beside it that each prefetch of
    the row loop reads: the loop addresses them from the same registers,
    the conversions at negative displacements, the prefetch at none; the
    farthest conversion (the first of a vector's halves) gives the
    distance."""
    listing = testlib.check_run(["objdump", "-d", "--no-show-raw-insn", object_path])
    lines = listing.splitlines()
    distances = set()
    for i, line in enumerate(lines):
        prefetch = re.search(r"prefetcht0\s+\((%\w+),(%\w+),1\)", line)
        if not prefetch:
            continue
        base = re.escape(f"({prefetch.group(1)},{prefetch.group(2)},1)")
        loads = [re.search(r"vcvtph2ps\s+-0x([0-9a-f]+)" + base, before)
                 for before in lines[max(0, i - 3):i]]
        offsets = [int(load.group(1), 16) for load in loads if load]
        if offsets:
            distances.add(max(offsets))
    return distances


def main():
    work = testlib.work_dir("e2e-weight-prefetch")
    for case, (args, expected) in CASES.items():
        model = testlib.compile_model(
            testlib.source_path("configs/llama-15m.json"), os.path.join(work, case),
            [*args, "--target", TARGET, "--kernel-cache", "none"])
        found = prefetches(model)
        print(f"{case}: {found}")
        assert len(found) >= 4, f"{case}: decode projection kernels missing: {sorted(found)}"
        for kernel, counts in found.items():
            if expected:
                assert counts.get("prefetcht0", 0) > 0, f"{case}: {kernel} does not prefetch"
                assert set(counts) == {"prefetcht0"}, f"{case}: {kernel} prefetches as {counts}"
            else:
                assert not counts, f"{case}: {kernel} prefetches: {counts}"
        if case in F16_DISTANCES:
            path = os.path.join(model, "obj", "decode_ffn_in.o")
            distances = f16_prefetch_distances(path)
            print(f"{case}: f16 prefetch distances {distances}")
            assert distances == {F16_DISTANCES[case]}, (
                f"{case}: {path}: f16 rows prefetched {sorted(distances)} bytes ahead of their "
                f"conversions, expected {F16_DISTANCES[case]}")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
