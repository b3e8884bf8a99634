//===- BufferBoundsCheck.h - Refuse a kernel that reaches outside its buffers -===//
//
// Halide asserts at run time that each buffer covers the region a kernel
// touches in it, one assert per buffer and dimension holding the region
// required. A schedule whose tiles overhang a region (an autoscheduler's
// shifted tail, say) would fail every call, or read before a weight's first
// row where the asserts are compiled out. This pass finds it at compile
// time: for calls at the ends of the kernel's range (KernelCalls.h), it
// evaluates the region each of those asserts requires and holds it to the
// window the driver binds. Nothing is executed.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_BUFFERBOUNDSCHECK_H
#define TFM_KERNELS_BUFFERBOUNDSCHECK_H

#include "KernelAlgorithm.h"
#include "KernelCalls.h"
#include "tfm/Program/CallWindow.h"

#include "Halide.h"

#include <string>
#include <utility>
#include <vector>

namespace tfm::kernels {

/// A custom lowering pass (Pipeline::add_custom_lowering_pass) that
/// changes nothing and records every region a call at the ends of `range`
/// would touch outside the buffers it is given.
class BufferBoundsCheck : public Halide::Internal::IRMutator {
public:
  BufferBoundsCheck(const Kernel &kernel, const KernelAlgorithm &algorithm, CallRange range);

  /// One line per region found outside its buffer: empty if none.
  const std::vector<std::string> &violations() const { return violations_; }

private:
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::LetStmt *let) override;
  Halide::Internal::Stmt visit(const Halide::Internal::AssertStmt *check) override;

  void checkRegion(const std::string &buffer, const Halide::Internal::Call *error);

  KernelCalls calls_;
  std::vector<std::pair<std::string, Halide::Expr>> lets_; // enclosing, outermost first
  std::vector<std::string> violations_;
};

} // namespace tfm::kernels

#endif // TFM_KERNELS_BUFFERBOUNDSCHECK_H
