//===- SharedMemoryCheck.h - Refuse a GPU kernel over its shared memory -*- C++ -*-===//
//
// Halide sizes a GPU block's shared memory at launch, from the region its
// Funcs computed at block level cover, and never raises the 48 KiB a CUDA
// launch gets by default: a kernel whose blocks want more fails at run
// time. This pass finds it at compile time: for the calls at the ends of
// the kernel's range (KernelCalls.h) it evaluates every shared allocation
// of each GPU kernel (sizes that vary by block at their largest) and sums
// them per block. Nothing is executed.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_SHAREDMEMORYCHECK_H
#define TFM_KERNELS_SHAREDMEMORYCHECK_H

#include "KernelAlgorithm.h"
#include "KernelCalls.h"

#include "Halide.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tfm::kernels {

/// The shared memory a CUDA block gets without opting in to more.
constexpr int64_t kSharedMemoryPerBlock = 48 * 1024;

/// A custom lowering pass that changes nothing and records every GPU
/// kernel whose blocks would take more than kSharedMemoryPerBlock.
class SharedMemoryCheck : public Halide::Internal::IRMutator {
public:
  SharedMemoryCheck(const Kernel &kernel, const KernelAlgorithm &algorithm, CallRange range);

  /// One line per GPU kernel over the limit: empty if none.
  const std::vector<std::string> &violations() const { return violations_; }
  /// The most bytes a block of each GPU kernel (by its block loop) takes
  /// over the calls checked.
  const std::map<std::string, int64_t> &bytesPerBlock() const { return bytesPerBlock_; }

private:
  using IRMutator::visit;
  using Lets = std::vector<std::pair<std::string, Halide::Expr>>;
  Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *let) override;
  Halide::Internal::Stmt visit(const Halide::Internal::For *loop) override;
  Halide::Internal::Stmt visit(const Halide::Internal::Store *store) override;
  Halide::Internal::Stmt visit(const Halide::Internal::Allocate *allocation) override;

  /// `e` with the enclosing lets put in.
  Halide::Expr withLets(Halide::Expr e) const;
  /// The largest value of `e` over the enclosing loops, lets put in.
  Halide::Expr largestOverLoops(Halide::Expr e) const;
  /// Sums one block loop's shared allocations for each call; notes it.
  void checkBlock(const std::string &loop, const std::vector<Halide::Expr> &sizes);

  KernelCalls calls_;
  Lets lets_;                                            // enclosing, outermost first
  std::vector<std::pair<std::string, Halide::Internal::Interval>> loops_; // enclosing
  std::map<std::string, Halide::Expr> largestSize_;      // a shared size's buffer -> its largest
  std::string blockLoop_;                                // the GPU block loop we are in
  std::vector<Halide::Expr> blockSizes_;                 // its shared allocations' bytes
  std::map<std::string, int64_t> bytesPerBlock_;
  std::vector<std::string> violations_;
};

} // namespace tfm::kernels

#endif // TFM_KERNELS_SHAREDMEMORYCHECK_H
