"""Prefill's products with 8-bit activations multiply in AMX tiles on a
target with amx_int8 (CpuFastSchedule.cpp, scheduleAmxTileDot), each block
of 32 values in one tdpbssd: Halide 14 writes 8 of 4 bytes, and the back end
folds them (compiler/lib/Codegen/AmxTileProducts.cpp), so each tile
product's sums are stored once per tdpbssd. q8_0's weights are read in
place, q4_0's unpacked first. Decode's matrix-vector products, f32
activations, and a target without amx_int8 use no tiles. The 15M Llama is
compiled, not run: any x86 machine with binutils' objdump runs it, AMX or
not."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import testlib  # noqa: E402

SAPPHIRE_RAPIDS = ("x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-"
                   "avx512_cannonlake-avx512_sapphirerapids")
PREFILL = ("prefill_attn_in", "prefill_attn_out", "prefill_ffn_in", "prefill_ffn_out")
DECODE = ("decode_attn_in", "decode_attn_out", "decode_ffn_in", "decode_ffn_out")

AMX_INT8 = ["--activations", "int8", "--target", SAPPHIRE_RAPIDS + "-amx_int8"]
CASES = {
    # name: (tfmc arguments, whether the prefill projections multiply in tiles)
    "q8_0-amx-int8": (["--dtype", "q8_0", *AMX_INT8], True),
    "q4_0-amx-int8": (["--dtype", "q4_0", *AMX_INT8], True),
    "q8_0-amx-f32": (["--dtype", "q8_0", "--target", SAPPHIRE_RAPIDS + "-amx_int8"], False),
    "q8_0-vnni-int8": (["--dtype", "q8_0", "--activations", "int8", "--target", SAPPHIRE_RAPIDS],
                       False),
}


def tile_instructions(model_dir, kernel):
    """{instruction: count} of the AMX instructions in one kernel's object."""
    return testlib.instruction_counts(os.path.join(model_dir, "obj", kernel + ".o"),
                                      "tdpbssd|tilestored|tileloadd|tilezero")


def main():
    work = testlib.work_dir("e2e-amx-tiles")
    for case, (args, tiles) in CASES.items():
        model = testlib.compile_model(
            testlib.source_path("configs/llama-15m.json"), os.path.join(work, case),
            ["--kernel-cache", "none", *args])
        for kernel in PREFILL + DECODE:
            counts = tile_instructions(model, kernel)
            print(f"{case} {kernel}: {counts}")
            if tiles and kernel in PREFILL:
                products = counts.get("tdpbssd", 0)
                assert products > 0, f"{case}: {kernel} has no tile product"
                assert products == counts.get("tilestored", 0), \
                    f"{case}: {kernel} has {products} tdpbssd for " \
                    f"{counts.get('tilestored', 0)} tile stores: chains left unfolded"
            else:
                assert not counts, f"{case}: {kernel} uses AMX tiles: {counts}"
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
