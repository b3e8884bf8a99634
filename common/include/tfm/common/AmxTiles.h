//===- AmxTiles.h - Linux's permission to use AMX tiles ----------*- C++ -*-===//
//
// Linux gives a process AMX's tile state (8 KiB per thread) only when the
// process asks for it; an AMX instruction without it faults. Free of LLVM
// and Halide headers, so that both halves of tfmc and their tests can ask.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_AMXTILES_H
#define TFM_COMMON_AMXTILES_H

namespace tfm {

/// Asks Linux for AMX's tile data for this process (arch_prctl
/// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); once granted, every thread of
/// the process may use the tiles. False where it is refused, and off
/// x86-64 Linux.
bool requestAmxTiles();

} // namespace tfm

#endif // TFM_COMMON_AMXTILES_H
