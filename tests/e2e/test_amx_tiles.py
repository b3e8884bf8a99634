"""Prefill's products with 8-bit activations multiply in AMX tiles on a
target with amx_int8 (Schedules/CpuFast/PrefillProducts.cpp, scheduleAmxTileDot), each block
of 32 values in one tdpbssd: Halide 14 writes 8 of 4 bytes, and the back end
folds them (compiler/lib/Codegen/AmxTileProducts.cpp), so each tile
product's sums are stored once per tdpbssd. q8_0's weights are read in
place, q4_0's unpacked first. With bf16 activations and weights on a target
with amx_bf16 (scheduleBf16TileProduct), each row tile's sums stay in one
tile for the whole row: Halide 14 writes a tdpbf16ps per pair, 16 to a
loop body, and the back end folds them into one of 64 bytes, so there are
no more tdpbf16ps than tile stores. Decode's matrix-vector products, f32
activations, and a target without the tiles use none. The 15M Llama is
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
AMX_BF16 = ["--dtype", "bf16", "--target", SAPPHIRE_RAPIDS + "-amx_bf16"]
CASES = {
    # name: (tfmc arguments, the tile product the prefill projections
    # multiply in, or None)
    "q8_0-amx-int8": (["--dtype", "q8_0", *AMX_INT8], "tdpbssd"),
    "q4_0-amx-int8": (["--dtype", "q4_0", *AMX_INT8], "tdpbssd"),
    "q8_0-amx-f32": (["--dtype", "q8_0", "--target", SAPPHIRE_RAPIDS + "-amx_int8"], None),
    "q8_0-vnni-int8": (["--dtype", "q8_0", "--activations", "int8", "--target", SAPPHIRE_RAPIDS],
                       None),
    "bf16-amx-bf16": ([*AMX_BF16, "--activations", "bf16"], "tdpbf16ps"),
    "bf16-amx-f32": (AMX_BF16, None),
    "bf16-avx512-bf16": (["--dtype", "bf16", "--activations", "bf16", "--target",
                          SAPPHIRE_RAPIDS + "-amx_int8"], None),
}


def tile_instructions(model_dir, kernel):
    """{instruction: count} of the AMX instructions in one kernel's object."""
    return testlib.instruction_counts(os.path.join(model_dir, "obj", kernel + ".o"),
                                      "tdpbssd|tdpbf16ps|tilestored|tileloadd|tilezero")


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
                products, stores = counts.get(tiles, 0), counts.get("tilestored", 0)
                assert products > 0, f"{case}: {kernel} has no {tiles}"
                folded = products == stores if tiles == "tdpbssd" else products <= stores
                assert folded, f"{case}: {kernel} has {products} {tiles} for {stores} tile " \
                    "stores: chains left unfolded"
            else:
                assert not counts, f"{case}: {kernel} uses AMX tiles: {counts}"
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
