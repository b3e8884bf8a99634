//===- KernelCalls.cpp - The calls a kernel serves, as its buffers see them ===//
#include "KernelCalls.h"

#include <algorithm>
#include <set>

using namespace Halide;
using namespace Halide::Internal;
using namespace tfm;
using namespace tfm::kernels;

namespace {

bool isDynamicRows(const KernelParam &p) {
  return p.tokenRows && !p.shape.empty() && p.shape.front() == kDynamicRows;
}

} // namespace

KernelCalls::KernelCalls(const Kernel &kernel, const KernelAlgorithm &algorithm, CallRange range)
    : kernel_(kernel), range_(range) {
  size_t input = 0;
  for (const KernelParam &p : kernel.params)
    if (!p.isOutput)
      buffers_.push_back({algorithm.inputs[input++].name(), &p});
  for (size_t i = 0; i < algorithm.outputs.size(); ++i)
    buffers_.push_back({algorithm.outputs[i].name(), algorithm.outputParams[i]});
}

std::vector<std::pair<int64_t, int64_t>> KernelCalls::calls() const {
  bool manyRows = std::any_of(kernel_.params.begin(), kernel_.params.end(), isDynamicRows);
  std::set<int64_t> rows{1};
  if (manyRows)
    for (int64_t n : {int64_t(2), int64_t(3), range_.maxRows - 1, range_.maxRows})
      if (n >= 1 && n <= range_.maxRows)
        rows.insert(n);
  std::vector<std::pair<int64_t, int64_t>> calls;
  for (int64_t n : rows)
    if (n <= range_.context)
      for (int64_t pos : {int64_t(0), range_.context - n})
        calls.push_back({pos, n});
  return calls;
}

std::map<std::string, Expr> KernelCalls::bufferShapes(int64_t pos, int64_t rows) const {
  std::map<std::string, Expr> shapes;
  for (const auto &[name, param] : buffers_) {
    RowWindow window = rowWindow(*param);
    int rowDim = static_cast<int>(param->shape.size()) - 1;
    auto set = [&, name = name](int dim, int64_t min, int64_t extent) {
      shapes[name + ".min." + std::to_string(dim)] = Expr(static_cast<int>(min));
      shapes[name + ".extent." + std::to_string(dim)] = Expr(static_cast<int>(extent));
    };
    if (rowDim == 1)
      set(0, 0, param->type.storedRowLength(param->shape[1]));
    // A window never starts before position 0 (a sliding one near the start).
    int64_t min = window.min.at(pos, rows), extent = window.extent.at(pos, rows);
    if (min < 0) {
      extent += min;
      min = 0;
    }
    set(rowDim, min, extent);
  }
  return shapes;
}

const KernelParam *KernelCalls::param(const std::string &halideName) const {
  auto found = std::find_if(buffers_.begin(), buffers_.end(),
                            [&](const auto &b) { return b.first == halideName; });
  return found == buffers_.end() ? nullptr : found->second;
}

Expr tfm::kernels::evaluateInCall(Expr e, const std::vector<std::pair<std::string, Expr>> &lets,
                                  const std::map<std::string, Expr> &shapes) {
  // The lets `e` names, innermost first (a let's value names only lets
  // outside it), wrapped around it for the simplifier to fold.
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    if (!shapes.count(it->first) && expr_uses_var(e, it->first))
      e = Let::make(it->first, it->second, e);
  return simplify(substitute(shapes, e));
}
