//===- BufferBoundsCheck.cpp - Refuse a kernel that reaches outside its buffers -===//
#include "BufferBoundsCheck.h"

#include <optional>

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

} // namespace

BufferBoundsCheck::BufferBoundsCheck(const Kernel &kernel, const KernelAlgorithm &algorithm,
                                     CallRange range)
    : calls_(kernel, algorithm, range) {}

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
  const KernelParam *found = calls_.param(name);
  const IntImm *dim = error->args[1].as<IntImm>();
  if (!found || !dim)
    return;
  const KernelParam &param = *found;
  std::string dimText = std::to_string(dim->value);
  for (auto [pos, rows] : calls_.calls()) {
    std::map<std::string, Expr> shapes = calls_.bufferShapes(pos, rows);
    std::optional<int64_t> minNeeded = constant(evaluateInCall(error->args[2], lets_, shapes));
    std::optional<int64_t> maxNeeded = constant(evaluateInCall(error->args[3], lets_, shapes));
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
