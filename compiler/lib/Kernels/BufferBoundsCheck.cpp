//===- BufferBoundsCheck.cpp - Refuse a kernel that reaches outside its buffers -===//
#include "BufferBoundsCheck.h"

#include "tfm/Program/CallWindow.h"

#include <algorithm>
#include <optional>
#include <set>

using namespace Halide;
using namespace Halide::Internal;
using namespace tfm;
using namespace tfm::kernels;

namespace {

/// Halide's access check names its buffer so (AddImageChecks.cpp).
constexpr const char *kBufferPrefixes[] = {"Input buffer ", "Output buffer "};

/// The value of a constant integer expression.
std::optional<int64_t> constant(const Expr &e) {
  if (const int64_t *value = as_const_int(e))
    return *value;
  return std::nullopt;
}

bool isDynamicRows(const KernelParam &p) {
  return p.tokenRows && !p.shape.empty() && p.shape.front() == kDynamicRows;
}

} // namespace

BufferBoundsCheck::BufferBoundsCheck(const Kernel &kernel, const KernelAlgorithm &algorithm,
                                     CallRange range)
    : kernel_(kernel), range_(range) {
  size_t input = 0;
  for (const KernelParam &p : kernel.params)
    if (!p.isOutput)
      buffers_.push_back({algorithm.inputs[input++].name(), &p});
  for (size_t i = 0; i < algorithm.outputs.size(); ++i)
    buffers_.push_back({algorithm.outputs[i].name(), algorithm.outputParams[i]});
}

std::vector<std::pair<int64_t, int64_t>> BufferBoundsCheck::calls() const {
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

std::map<std::string, Expr> BufferBoundsCheck::bufferShapes(int64_t pos, int64_t rows) const {
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
    set(rowDim, window.min.at(pos, rows), window.extent.at(pos, rows));
  }
  return shapes;
}

Expr BufferBoundsCheck::evaluate(Expr e, const std::map<std::string, Expr> &shapes) const {
  // The lets `e` names, innermost first (a let's value names only lets
  // outside it), wrapped around it for the simplifier to fold. A buffer's
  // own shape symbols are lets reading the buffer: the call's shape
  // replaces them.
  for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
    if (!shapes.count(it->first) && expr_uses_var(e, it->first))
      e = Let::make(it->first, it->second, e);
  return simplify(substitute(shapes, e));
}

Stmt BufferBoundsCheck::visit(const LetStmt *let) {
  lets_.push_back({let->name, let->value});
  Stmt result = IRMutator::visit(let);
  lets_.pop_back();
  return result;
}

Stmt BufferBoundsCheck::visit(const AssertStmt *check) {
  // The message may bind values it reports in lets of its own.
  size_t outerLets = lets_.size();
  Expr message = check->message;
  while (const Let *let = message.as<Let>()) {
    lets_.push_back({let->name, let->value});
    message = let->body;
  }
  const Call *error = message.as<Call>();
  if (error && error->name == "halide_error_access_out_of_bounds" && error->args.size() >= 4)
    if (const StringImm *buffer = error->args[0].as<StringImm>())
      checkRegion(buffer->value, error);
  lets_.resize(outerLets);
  return IRMutator::visit(check);
}

void BufferBoundsCheck::checkRegion(const std::string &buffer, const Call *error) {
  std::string name = buffer;
  for (const char *prefix : kBufferPrefixes)
    if (starts_with(buffer, prefix))
      name = buffer.substr(std::string(prefix).size());
  auto found = std::find_if(buffers_.begin(), buffers_.end(),
                            [&](const auto &b) { return b.first == name; });
  const IntImm *dim = error->args[1].as<IntImm>();
  if (found == buffers_.end() || !dim)
    return;
  const KernelParam &param = *found->second;
  std::string dimText = std::to_string(dim->value);
  for (auto [pos, rows] : calls()) {
    std::map<std::string, Expr> shapes = bufferShapes(pos, rows);
    std::optional<int64_t> minNeeded = constant(evaluate(error->args[2], shapes));
    std::optional<int64_t> maxNeeded = constant(evaluate(error->args[3], shapes));
    if (!minNeeded || !maxNeeded) // depends on more than the call: Halide asserts it
      continue;
    int64_t min = *constant(shapes[name + ".min." + dimText]);
    int64_t max = min + *constant(shapes[name + ".extent." + dimText]) - 1;
    if (*minNeeded >= min && *maxNeeded <= max)
      continue;
    violations_.push_back((param.isOutput ? "output " : "input ") + param.name + " dimension " +
                          dimText + ": a call of " + std::to_string(rows) + " rows at position " +
                          std::to_string(pos) + " reaches " + std::to_string(*minNeeded) + ".." +
                          std::to_string(*maxNeeded) + ", outside the " + std::to_string(min) +
                          ".." + std::to_string(max) + " it is given");
    return; // one call is enough to refuse the kernel
  }
}
