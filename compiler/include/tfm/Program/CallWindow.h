//===- CallWindow.h - The rows of a buffer one call binds -------*- C++ -*-===//
//
// A kernel's parameters are buffers the generated driver builds for each
// call of T token rows at position pos: a weight whole, the call's rows of
// an activation, one layer's cache up to the call's last position. The one
// definition of those windows: the driver emits them as C
// (DriverEmitter.cpp), and the kernel compiler holds every kernel's reads
// and writes to them (compiler/lib/Kernels/BufferBoundsCheck.h). Free of
// MLIR and Halide, as Program.h.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PROGRAM_CALLWINDOW_H
#define TFM_PROGRAM_CALLWINDOW_H

#include "tfm/Program/Program.h"

#include <cstdint>

namespace tfm {

/// The calls a kernel serves: up to `maxRows` token rows (Program's
/// prefillChunk; a kernel of one row takes one), at positions up to
/// `context` - 1.
struct CallRange {
  int64_t context = 1, maxRows = 1;
};

/// constant + perPosition * pos + perRow * T: one bound of a window, for a
/// call of T rows at position pos.
struct CallAffine {
  int64_t constant = 0, perPosition = 0, perRow = 0;

  int64_t at(int64_t pos, int64_t rows) const {
    return constant + perPosition * pos + perRow * rows;
  }
};

/// The range of a buffer's last dimension (its rows; a 1-D buffer's only
/// one) that a call binds, in absolute positions for token rows.
struct RowWindow {
  CallAffine min, extent;
};

/// The rows of parameter `p` in a call: a weight's all; the call's own
/// rows of token rows (and of a cache the kernel writes); a cache the
/// kernel reads from its first position to the call's last; and one row
/// that is not a token row, the call's last.
///
/// A sliding cache read by a window of w keys is needed from the call's
/// first row's window, w - 1 positions before the call (a window before
/// position 0 starts there). The driver binds the rows the buffer holds,
/// which start at or before that (DriverEmitter.cpp's slide_caches), so a
/// kernel that reads inside this window reads inside what it is given.
///
/// A source cache a kernel reads holds the encoded source's rows, whatever
/// the call's positions: the driver binds the source's, at most the
/// buffer's (DriverEmitter.cpp), and the kernel reads the keys it is given.
inline RowWindow rowWindow(const KernelParam &p) {
  const CallAffine pos{0, 1, 0}, rows{0, 0, 1}, lastRow{-1, 1, 1}, one{1, 0, 0};
  if (p.isCache && !p.isOutput && p.sourceCache)
    return {{}, {p.shape.front(), 0, 0}};
  if (p.isCache && !p.isOutput && p.slidingWindow > 0)
    return {{-(p.slidingWindow - 1), 1, 0}, {p.slidingWindow - 1, 0, 1}};
  if (p.isCache)
    return p.isOutput ? RowWindow{pos, rows} : RowWindow{{}, {0, 1, 1}};
  if (p.tokenRows)
    return {pos, rows};
  if (p.isWeight || p.shape.size() == 1)
    return {{}, {p.shape.front(), 0, 0}};
  return {lastRow, one};
}

} // namespace tfm

#endif // TFM_PROGRAM_CALLWINDOW_H
