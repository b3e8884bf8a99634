//===- PlanMemory.cpp - static offsets for caches and arena values --------===//
#include "tfm/Dialect/TfmOps.h"
#include "tfm/Transforms/Passes.h"
#include "tfm/common/Targets.h"

namespace tfm {
#define GEN_PASS_DEF_TFMPLANMEMORY
#include "tfm/Transforms/Passes.h.inc"
} // namespace tfm

using namespace mlir;

namespace tfm {
namespace {

constexpr int64_t kElementBytes = 4; // activations are f32

/// Where values and caches start: on 64-byte lines for a CPU; for a GPU
/// where an OpenCL kernel can be given them (a sub-buffer's alignment),
/// which CUDA's coalesced loads like too.
int64_t alignmentFor(ModuleOp module) {
  auto target = module->getAttrOfType<StringAttr>(attrs::kTarget);
  return target && targetDevice(target.getValue()) != TargetDevice::Cpu
             ? kOpenClSubBufferAlignment
             : 64;
}

/// One arena value: live from the launch that defines it to its last reader,
/// both inclusive (a kernel's inputs and outputs are live at the same time).
struct Interval {
  Value value;
  int64_t first, last, bytes;
  int64_t offset = -1;
  bool overlaps(const Interval &other) const {
    return first <= other.last && other.first <= last;
  }
};

struct PlanMemoryPass : public impl::TfmPlanMemoryBase<PlanMemoryPass> {
  int64_t alignment = 64;

  int64_t alignUp(int64_t bytes) const { return (bytes + alignment - 1) / alignment * alignment; }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    alignment = alignmentFor(module);
    std::optional<int64_t> chunk;
    if (auto attr = module->getAttrOfType<IntegerAttr>(attrs::kPrefillChunk))
      chunk = attr.getInt();
    planCaches(module);
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(attrs::kEntry) && failed(planEntry(fn, chunk)))
        return signalPassFailure();
  }

  /// The caches back to back in declaration order, each aligned, then the
  /// int64 position of each sliding cache's first row, or a source cache's
  /// row count (its `base`).
  void planCaches(ModuleOp module) {
    Builder b(&getContext());
    int64_t bytes = 0;
    for (auto decl : module.getOps<CacheDeclOp>()) {
      auto type = cast<MemRefType>(decl.getType());
      decl.setOffsetAttr(b.getI64IntegerAttr(bytes));
      bytes += alignUp(type.getNumElements() * type.getElementTypeBitWidth() / 8);
    }
    int64_t bases = bytes;
    for (auto decl : module.getOps<CacheDeclOp>())
      if (decl.getWindow() || decl.getSource()) {
        decl.setBaseAttr(b.getI64IntegerAttr(bases));
        bases += static_cast<int64_t>(sizeof(int64_t));
      }
    bytes += alignUp(bases - bytes);
    if (bytes > 0)
      module->setAttr(attrs::kKvCacheBytes, b.getI64IntegerAttr(bytes));
  }

  LogicalResult planEntry(func::FuncOp entry, std::optional<int64_t> chunk) {
    SmallVector<LaunchOp> launches(entry.getOps<LaunchOp>());
    llvm::DenseMap<Operation *, int64_t> position;
    for (auto [index, launch] : llvm::enumerate(launches))
      position[launch] = index;

    std::vector<Interval> intervals;
    for (auto [index, launch] : llvm::enumerate(launches)) {
      for (Value result : launch.getResults()) {
        bool returned = llvm::any_of(result.getUsers(), [](Operation *user) {
          return isa<func::ReturnOp>(user);
        });
        if (returned) // the logits: caller's buffer
          continue;
        auto type = cast<RankedTensorType>(result.getType());
        int64_t elements = 1;
        for (int64_t dim : type.getShape()) {
          if (ShapedType::isDynamic(dim)) {
            if (!chunk)
              return launch.emitError()
                     << "result type " << type
                     << " has dynamic rows but the module has no "
                     << attrs::kPrefillChunk << " to bound them";
            dim = *chunk;
          }
          elements *= dim;
        }
        int64_t last = index;
        for (Operation *user : result.getUsers()) {
          auto it = position.find(user);
          if (it == position.end())
            return user->emitError()
                   << "arena values may only be read by tfm.launch or "
                      "returned; found "
                   << user->getName();
          last = std::max(last, it->second);
        }
        intervals.push_back({result, static_cast<int64_t>(index), last,
                             alignUp(elements * kElementBytes)});
      }
    }

    int64_t arenaBytes = firstFit(intervals);

    llvm::DenseMap<Value, int64_t> offsets;
    for (const Interval &interval : intervals)
      offsets[interval.value] = interval.offset;
    Builder b(&getContext());
    for (LaunchOp launch : launches) {
      SmallVector<int64_t> resultOffsets;
      for (Value result : launch.getResults())
        resultOffsets.push_back(offsets.lookup_or(result, -1));
      launch.setArenaOffsetsAttr(b.getDenseI64ArrayAttr(resultOffsets));
    }
    entry->setAttr(attrs::kArenaBytes, b.getI64IntegerAttr(arenaBytes));
    return success();
  }

  /// Places values in definition order at the lowest offset that no
  /// simultaneously live, already placed value occupies. Returns the size.
  /// Values are defined in order, so one whose last use is before this
  /// definition is dead for every later one: only the live ones are looked
  /// at, and planning stays linear in the launches for a bounded live set.
  static int64_t firstFit(std::vector<Interval> &intervals) {
    int64_t arenaBytes = 0;
    std::vector<size_t> live; // placed values not yet dead
    for (size_t i = 0; i < intervals.size(); ++i) {
      llvm::erase_if(live, [&](size_t j) { return intervals[j].last < intervals[i].first; });
      std::vector<std::pair<int64_t, int64_t>> taken; // [begin, end)
      for (size_t j : live)
        if (intervals[j].overlaps(intervals[i]))
          taken.push_back({intervals[j].offset,
                           intervals[j].offset + intervals[j].bytes});
      llvm::sort(taken);
      int64_t offset = 0;
      for (auto [begin, end] : taken) {
        if (offset + intervals[i].bytes <= begin)
          break;
        offset = std::max(offset, end);
      }
      intervals[i].offset = offset;
      live.push_back(i);
      arenaBytes = std::max(arenaBytes, offset + intervals[i].bytes);
    }
    return arenaBytes;
  }
};

} // namespace
} // namespace tfm
