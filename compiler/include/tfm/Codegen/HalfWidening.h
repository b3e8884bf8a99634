//===- HalfWidening.h - f16 widening as the CPU's own instruction -*- C++ -*-===//
//
// Halide 14 has no f16 arithmetic type on x86, so the kernels widen f16 bits
// with integer operations (tfm::kernels::halfBitsToFloat): the bits shifted
// into an f32's place, bits 28..30 cleared and one multiplication by 2^112
// for a normal f16, the mantissa converted as an integer for a subnormal,
// an all-ones exponent for infinities and NaN, and two selects. That is
// about a dozen instructions for every 8 values. Where the target converts
// f16 itself (x86's F16C, AArch64), the bitcode's copies of that idiom
// become one conversion (`fpext half`), which gives the same value for
// every f16, subnormals, infinities and NaN included.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_HALFWIDENING_H
#define TFM_CODEGEN_HALFWIDENING_H

namespace llvm {
class Module;
} // namespace llvm

namespace tfm {

/// Replaces each widening of f16 bits written as halfBitsToFloat's idiom
/// in `module` with `fpext half`; returns how many it replaced.
int widenHalvesNatively(llvm::Module &module);

} // namespace tfm

#endif // TFM_CODEGEN_HALFWIDENING_H
