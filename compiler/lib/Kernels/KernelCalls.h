//===- KernelCalls.h - The calls a kernel serves, as its buffers see them -*- C++ -*-===//
//
// The compile-time checks of a kernel (BufferBoundsCheck.h,
// SharedMemoryCheck.h) evaluate what Halide's lowered statement says for
// the calls at the ends of the kernel's range: the first and last
// positions, for one row, a few rows and a whole chunk, each buffer given
// the window the driver binds (tfm/Program/CallWindow.h).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_KERNELCALLS_H
#define TFM_KERNELS_KERNELCALLS_H

#include "KernelAlgorithm.h"
#include "tfm/Program/CallWindow.h"

#include "Halide.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tfm::kernels {

class KernelCalls {
public:
  KernelCalls(const Kernel &kernel, const KernelAlgorithm &algorithm, CallRange range);

  /// (pos, rows) of the calls checked.
  std::vector<std::pair<int64_t, int64_t>> calls() const;
  /// Every buffer's min and extent symbol in a call, as the driver binds it.
  std::map<std::string, Halide::Expr> bufferShapes(int64_t pos, int64_t rows) const;
  /// The parameter behind a buffer of Halide's name; null if none.
  const KernelParam *param(const std::string &halideName) const;

private:
  const Kernel &kernel_;
  CallRange range_;
  std::vector<std::pair<std::string, const KernelParam *>> buffers_; // Halide name, param
};

/// `e` with `lets` (enclosing, outermost first) put in where it names them
/// and `shapes` for the buffers' symbols, simplified. A buffer's own shape
/// symbols are lets reading the buffer: `shapes` replaces them.
Halide::Expr evaluateInCall(Halide::Expr e,
                            const std::vector<std::pair<std::string, Halide::Expr>> &lets,
                            const std::map<std::string, Halide::Expr> &shapes);

} // namespace tfm::kernels

#endif // TFM_KERNELS_KERNELCALLS_H
