"""8-bit products (tfmc --activations int8) multiply pairs of bytes on x86
targets without AVX-512 VNNI: IntegerProduct::pairDot's forms become
vpmaddubsw and vpmaddwd in every decode and prefill projection, for q8_0
(the bytes as magnitudes, the levels with the bytes' signs) and q4_0
(levels as stored, less a zero point; the 15M Llama's rows of 288 hold no
k-quant blocks). On avx512_sapphirerapids they stay vpdpbusd, with no
vpmaddubsw. The 15M Llama is compiled, not run: any x86 machine with
binutils' objdump runs it; the reference tests with --target avx2 check the
pairs' logits."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

SAPPHIRE_RAPIDS = ("x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-"
                   "avx512_cannonlake-avx512_sapphirerapids")
KERNELS = ("decode_attn_in", "decode_attn_out", "decode_ffn_in", "decode_ffn_out",
           "prefill_attn_in", "prefill_attn_out", "prefill_ffn_in", "prefill_ffn_out")
# target: (the instruction its products use, the one they must not)
TARGETS = {"avx2": ("vpmaddubsw", "vpdpbusd"), "avx512": ("vpmaddubsw", "vpdpbusd"),
           SAPPHIRE_RAPIDS: ("vpdpbusd", "vpmaddubsw")}


def main():
    work = testlib.work_dir("e2e-byte-pairs")
    for dtype in ("q8_0", "q4_0"):
        for target, (used, unused) in TARGETS.items():
            name = f"{dtype}-{'sapphirerapids' if target == SAPPHIRE_RAPIDS else target}"
            model = testlib.compile_model(
                testlib.source_path("configs/llama-15m.json"), os.path.join(work, name),
                ["--kernel-cache", "none", "--dtype", dtype, "--activations", "int8",
                 "--target", target])
            for kernel in KERNELS:
                counts = testlib.instruction_counts(
                    os.path.join(model, "obj", kernel + ".o"), "vpmaddubsw|vpmaddwd|vpdpbusd")
                print(f"{name} {kernel}: {counts}")
                assert counts.get(used, 0) > 0, f"{name}: {kernel} has no {used}"
                assert counts.get(unused, 0) == 0, f"{name}: {kernel} has {unused}"
                if used == "vpmaddubsw":
                    assert counts.get("vpmaddwd", 0) > 0, f"{name}: {kernel} has no vpmaddwd"
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
