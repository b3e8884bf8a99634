//===- AmxTileProducts.h - AMX tile products as x86 runs them -*- C++ -*-===//
//
// Halide 14 emits an AMX tile product (tdpbssd, tdpbf16ps) with 4 bytes of
// depth per instruction at most (Schedules/CpuFast/PrefillProducts.cpp,
// scheduleAmxTileDot and scheduleBf16TileProduct): a unit of 32 int8 levels becomes a chain of 8
// tdpbssd, 16 bf16 pairs a chain of 16 tdpbf16ps, each loading a 16 x 4
// tile of weights and a 1 x 64 tile of activations. The instruction takes the
// same time whatever its depth: on an Intel Sapphire Rapids VM, 4.3-4.5 ns
// for K = 4, 8, 16, 32 and 64 alike (four independent accumulators), so 4
// bytes reach 460 GOPS per core where 32 reach 3600. The back end
// therefore folds each such chain into one product of the chain's whole
// depth (up to 64 bytes): the weights' tile is the chain's 4-byte columns
// side by side, the activations' tile its rows one stride apart. It folds
// only what it proves: consecutive 4-byte steps along each weight row, and
// activation rows at a constant distance (ScalarEvolution), with nothing
// written to memory in between.
//
// It also gives each product a zero tile of its own where LLVM 14 hoisted
// Halide's tilezero out of the loop that resets it: x86 copies a shared
// tile through memory before each product overwrites it.
//
// 110M Llama q8_0 with 8-bit activations, prefill of 128 tokens
// (tfm-bench --rates, 2 threads): 1620-1750 tok/s with vpdpbusd, about
// 2000 with the chains as Halide wrote them, 2300-2470 folded.
//
#ifndef TFM_CODEGEN_AMXTILEPRODUCTS_H
#define TFM_CODEGEN_AMXTILEPRODUCTS_H

namespace llvm {
class Module;
} // namespace llvm

namespace tfm {

/// Folds every chain of tile products of 4 bytes' depth in `module` whose tiles
/// lie as above into products of up to 64 bytes, and gives each product
/// fed a zero tile made elsewhere its own; returns how many instructions
/// the folds removed.
int rewriteAmxTileProducts(llvm::Module &module);

} // namespace tfm

#endif // TFM_CODEGEN_AMXTILEPRODUCTS_H
