"""f16 weights are widened by the CPU's own conversion where the target has
one: tfmc's back end finds halfBitsToFloat's integer idiom in the bitcode
Halide writes and replaces it (compiler/lib/Codegen/HalfWidening.cpp). Its
unit test checks the replacement on a hand-written copy of the idiom; this
one checks that the idiom Halide really emits is found. aidreams260k with
every matrix in f16 is compiled for AVX2 (which has F16C): the kernels that
read f16 weights convert them with vcvtph2ps. Compiled for SSE4.1 and AVX
(no F16C), they keep the idiom and no conversion instruction appears.
Only compiles: any x86 machine with binutils' objdump runs it."""

import glob
import os
import sys

import aidreams
import testlib

TARGETS = {
    "f16c": "x86-64-linux-sse41-avx-f16c-fma-avx2",
    "no-f16c": "x86-64-linux-sse41-avx",
}


def conversions(model_dir):
    """vcvtph2ps instructions in each kernel's object file, by kernel."""
    counts = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "obj", "*.o"))):
        name = os.path.basename(path)[:-2]
        if name in ("driver", "halide_runtime"):
            continue
        counts[name] = testlib.instruction_counts(path, "vcvtph2ps").get("vcvtph2ps", 0)
    return counts


def main():
    work = testlib.work_dir("e2e-half-widening")
    found = {}
    for case, target in TARGETS.items():
        model = testlib.compile_model(
            aidreams.config(), os.path.join(work, case),
            ["--dtype", "f16", "--target", target, "--kernel-cache", "none"])
        found[case] = conversions(model)
        print(f"{case}: {found[case]}")
    readers = [k for k in ("decode_attn_in", "decode_ffn_in", "decode_logits")
               if k in found["f16c"]]
    assert readers, f"no decode projection kernels among {sorted(found['f16c'])}"
    for kernel in readers:
        assert found["f16c"][kernel] > 0, f"{kernel}: f16 weights not widened by vcvtph2ps"
    assert sum(found["no-f16c"].values()) == 0, "vcvtph2ps emitted for a target without F16C"
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
