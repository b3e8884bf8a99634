//===- SharedMemoryCheck.cpp - Refuse a GPU kernel over its shared memory --===//
#include "SharedMemoryCheck.h"

#include <algorithm>
#include <sstream>

using namespace Halide;
using namespace Halide::Internal;
using namespace tfm;
using namespace tfm::kernels;

namespace {

/// Halide keeps the size of a shared allocation that varies by block in a
/// one-element buffer of this suffix, the largest over a host loop that
/// mirrors the block loop, and reads it into a variable of the same name
/// with "_var" added (FuseGPUThreadLoops.cpp).
constexpr const char kSharedSizeSuffix[] = ".shared_size";

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Whether a let reads a buffer's min or extent: its symbol stays free,
/// for the call's shape to replace (KernelCalls::bufferShapes).
bool readsBufferShape(const Expr &value) {
  const Call *call = value.as<Call>();
  return call && starts_with(call->name, "_halide_buffer_get_");
}

} // namespace

SharedMemoryCheck::SharedMemoryCheck(const Kernel &kernel, const KernelAlgorithm &algorithm,
                                     CallRange range)
    : calls_(kernel, algorithm, range) {}

Expr SharedMemoryCheck::withLets(Expr e) const {
  for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
    if (!readsBufferShape(it->second) && expr_uses_var(e, it->first))
      e = Let::make(it->first, it->second, e);
  return e;
}

Expr SharedMemoryCheck::largestOverLoops(Expr e) const {
  Scope<Interval> scope;
  for (const auto &[name, interval] : loops_)
    scope.push(name, interval);
  Interval bounds = bounds_of_expr_in_scope(withLets(e), scope);
  return bounds.has_upper_bound() ? bounds.max : Expr();
}

Stmt SharedMemoryCheck::visit(const LetStmt *let) {
  Expr value = let->value;
  // The variable a varying shared size is read into: its largest value.
  if (const Load *load = value.as<Load>()) {
    auto largest = largestSize_.find(load->name);
    if (largest != largestSize_.end())
      value = largest->second;
  }
  lets_.push_back({let->name, value});
  Stmt result = IRMutator::visit(let);
  lets_.pop_back();
  return result;
}

Stmt SharedMemoryCheck::visit(const For *loop) {
  Expr min = withLets(loop->min), max = withLets(loop->min + loop->extent - 1);
  loops_.push_back({loop->name, Interval(min, max)});
  bool outermostBlock = loop->for_type == ForType::GPUBlock && blockLoop_.empty();
  if (outermostBlock)
    blockLoop_ = loop->name;
  Stmt result = IRMutator::visit(loop);
  if (outermostBlock) {
    checkBlock(blockLoop_, blockSizes_);
    blockLoop_.clear();
    blockSizes_.clear();
  }
  loops_.pop_back();
  return result;
}

Stmt SharedMemoryCheck::visit(const Store *store) {
  // shared_size[0] = max(shared_size[0], size of this block): the size's
  // largest over the loop.
  if (endsWith(store->name, kSharedSizeSuffix))
    if (const Max *running = store->value.as<Max>()) {
      Expr size = running->a.as<Load>() ? running->b : running->a;
      Expr largest = largestOverLoops(size);
      Expr &known = largestSize_[store->name];
      known = !largest.defined() || !known.defined() ? largest : max(known, largest);
    }
  return IRMutator::visit(store);
}

Stmt SharedMemoryCheck::visit(const Allocate *allocation) {
  if (allocation->memory_type == MemoryType::GPUShared && !blockLoop_.empty()) {
    Expr bytes = Expr(static_cast<int64_t>(allocation->type.bytes()));
    for (const Expr &extent : allocation->extents)
      bytes = bytes * cast<int64_t>(extent);
    blockSizes_.push_back(largestOverLoops(bytes));
  }
  return IRMutator::visit(allocation);
}

void SharedMemoryCheck::checkBlock(const std::string &loop, const std::vector<Expr> &sizes) {
  if (sizes.empty())
    return;
  int64_t most = 0;
  for (auto [pos, rows] : calls_.calls()) {
    std::map<std::string, Expr> shapes = calls_.bufferShapes(pos, rows);
    int64_t total = 0;
    for (const Expr &size : sizes) {
      const int64_t *bytes = nullptr;
      Expr value;
      if (size.defined()) {
        value = evaluateInCall(size, {}, shapes);
        bytes = as_const_int(value);
      }
      if (!bytes) {
        violations_.push_back("GPU kernel " + loop + ": a block's shared memory in a call of " +
                              std::to_string(rows) + " rows at position " + std::to_string(pos) +
                              " has no bound tfmc can find" + (value.defined() ? std::string(": ") + [&]{ std::ostringstream o; o << value; return o.str(); }() : std::string(" (unbounded)")));
        return;
      }
      total += *bytes;
    }
    most = std::max(most, total);
    if (total > kSharedMemoryPerBlock) {
      violations_.push_back("GPU kernel " + loop + ": a block takes " + std::to_string(total) +
                            " bytes of shared memory in a call of " + std::to_string(rows) +
                            " rows at position " + std::to_string(pos) + ", over the " +
                            std::to_string(kSharedMemoryPerBlock) + " a launch gets");
      return;
    }
  }
  bytesPerBlock_[loop] = std::max(bytesPerBlock_[loop], most);
}
