//===- VerifyProgram.cpp - A lowered model checked against itself ---------===//
#include "VerifyProgram.h"

#include "tfm/common/Failure.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/Targets.h"
#include "tfm/common/UntrustedText.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

using namespace tfm;

namespace {

/// Kernels index their buffers with int32 element offsets; positions are
/// int32 in the ABI.
constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

/// Arena values and cache buffers start on 64-byte boundaries (tfm-plan-memory).
constexpr int64_t kAlignment = 64;

/// a * b, or nothing when it overflows.
std::optional<int64_t> times(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    return std::nullopt;
  return product;
}

/// a + b, or nothing when it overflows.
std::optional<int64_t> plus(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (shape[i] == kDynamicRows ? "?" : std::to_string(shape[i]));
  return text + "]";
}

std::string paramText(const KernelParam &p) { return shapeText(p.shape) + " " + p.type.name(); }

std::string range(int64_t begin, int64_t end) {
  return std::to_string(begin) + ".." + std::to_string(end);
}

/// An arena value a launch wrote: bytes [begin, end).
struct ArenaValue {
  int64_t end;
  size_t launch;
};

class ProgramVerifier {
public:
  explicit ProgramVerifier(const Program &p) : p(p) {}

  llvm::Error run() {
    for (auto check : {&ProgramVerifier::checkSizes, &ProgramVerifier::checkConfig,
                       &ProgramVerifier::checkWeights, &ProgramVerifier::checkCaches,
                       &ProgramVerifier::checkKernels})
      if (llvm::Error e = (this->*check)())
        return e;
    for (EntryKind kind : entryKindsOf(p.architecture))
      if (llvm::Error e = checkEntry(p.entry(kind)))
        return e;
    return llvm::Error::success();
  }

private:
  llvm::Error fail(const std::string &message) { return failure(message); }

  llvm::Error checkSizes() {
    if (p.contextLength < 1 || p.contextLength > kMaxIndex)
      return fail("tfm.context_length: found " + std::to_string(p.contextLength) +
                  ", expected 1 to " + std::to_string(kMaxIndex) + " (positions are int32)");
    if (p.vocabSize < 1 || p.vocabSize > kMaxIndex)
      return fail("tfm.vocab_size: found " + std::to_string(p.vocabSize) + ", expected 1 to " +
                  std::to_string(kMaxIndex));
    if (p.prefillChunk < 1 || p.prefillChunk > p.contextLength)
      return fail("tfm.prefill_chunk: found " + std::to_string(p.prefillChunk) +
                  ", expected 1 to tfm.context_length (" + std::to_string(p.contextLength) + ")");
    if (p.kvCacheBytes < 0)
      return fail("tfm.kv_cache_bytes: found " + std::to_string(p.kvCacheBytes) +
                  ", expected at least 0");
    return llvm::Error::success();
  }

  /// The runtime reads the config back from the manifest and sizes its
  /// buffers by the library's own numbers: the two must be one model.
  llvm::Error checkConfig() {
    llvm::Expected<ModelSpec> config =
        parseCanonicalSpec(p.configJson, "the module's tfm.config", "config.");
    if (!config)
      return config.takeError();
    if (config->contextLength != p.contextLength)
      return fail("tfm.config's context_length " + std::to_string(config->contextLength) +
                  " differs from tfm.context_length " + std::to_string(p.contextLength));
    if (config->vocabSize != p.vocabSize)
      return fail("tfm.config's vocab_size " + std::to_string(config->vocabSize) +
                  " differs from tfm.vocab_size " + std::to_string(p.vocabSize));
    return llvm::Error::success();
  }

  llvm::Error checkWeights() {
    for (const WeightInfo &w : p.weights) {
      int64_t rows = w.shape.size() == 2 ? w.shape[0] : 1;
      std::optional<int64_t> elements = times(rows, w.type.storedRowLength(w.shape.back()));
      if (!elements || *elements > kMaxIndex)
        return fail("weight " + quoted(w.name) + " " + shapeText(w.shape) + " " + w.type.name() +
                    ": more than the " + std::to_string(kMaxIndex) +
                    " stored elements a kernel indexes");
    }
    return llvm::Error::success();
  }

  llvm::Error checkCaches() {
    struct Placed {
      int64_t begin, end;
      std::string what;
    };
    std::vector<Placed> placed;
    for (const CacheBuffer &c : p.caches) {
      std::string name = "cache " + quoted(c.name);
      if (llvm::Error e = checkCacheRows(c))
        return e;
      std::optional<int64_t> elements = times(c.rows, c.cols);
      if (c.cols < 1 || !elements || *elements > kMaxIndex)
        return fail(name + ": [" + std::to_string(c.rows) + ", " + std::to_string(c.cols) +
                    "], expected at most " + std::to_string(kMaxIndex) + " elements");
      std::optional<int64_t> end = plus(c.offset, *elements * dtypeBytes(c.type));
      if (c.offset < 0 || c.offset % kAlignment != 0 || !end || *end > p.kvCacheBytes)
        return fail(name + ": offset " + std::to_string(c.offset) + " and " +
                    std::to_string(*elements * dtypeBytes(c.type)) +
                    " bytes, but tfm.kv_cache_bytes is " + std::to_string(p.kvCacheBytes) +
                    ": expected a 64-byte aligned offset with the buffer inside the block");
      placed.push_back({c.offset, *end, name});
      if (c.window == 0 && !c.source)
        continue;
      constexpr int64_t kBaseBytes = sizeof(int64_t);
      if (c.baseOffset < 0 || c.baseOffset % kBaseBytes != 0 ||
          c.baseOffset > p.kvCacheBytes - kBaseBytes)
        return fail(name + ": base " + std::to_string(c.baseOffset) +
                    ", but tfm.kv_cache_bytes is " + std::to_string(p.kvCacheBytes) +
                    ": expected an 8-byte aligned slot inside the block");
      placed.push_back({c.baseOffset, c.baseOffset + kBaseBytes, name + "'s base"});
    }
    std::sort(placed.begin(), placed.end(),
              [](const Placed &a, const Placed &b) { return a.begin < b.begin; });
    for (size_t i = 1; i < placed.size(); ++i)
      if (placed[i].begin < placed[i - 1].end)
        return fail(placed[i - 1].what + " (bytes " + range(placed[i - 1].begin, placed[i - 1].end) +
                    ") and " + placed[i].what + " (from byte " + std::to_string(placed[i].begin) +
                    ") overlap");
    return llvm::Error::success();
  }

  /// A cache holds one row per position, or slides (on a CPU target): then
  /// it holds a window's positions before a call and the call's rows, which
  /// the driver's moves of its rows rely on.
  llvm::Error checkCacheRows(const CacheBuffer &c) {
    std::string name = "cache " + quoted(c.name);
    if (c.source) { // the source's rows, which one encode (of at most a chunk) writes whole
      if (c.window != 0 || c.rows != p.sourceLength || p.prefillChunk > c.rows)
        return fail(name + ": a source cache of " + std::to_string(c.rows) + " rows" +
                    (c.window ? " with a window" : "") +
                    ": expected the config's source_length (" + std::to_string(p.sourceLength) +
                    "), at least tfm.prefill_chunk (" + std::to_string(p.prefillChunk) +
                    ", the most tokens an encode writes), and no window");
      return llvm::Error::success();
    }
    if (c.window == 0) {
      if (c.rows != p.contextLength)
        return fail(name + ": " + std::to_string(c.rows) + " rows, but tfm.context_length is " +
                    std::to_string(p.contextLength) + ": expected one row per position");
      return llvm::Error::success();
    }
    if (targetDevice(p.target) != TargetDevice::Cpu)
      return fail(name + " slides (window " + std::to_string(c.window) + "), but target " +
                  quoted(p.target) + " is a GPU's, whose caches hold every position");
    std::optional<int64_t> needed = plus(c.window - 1, p.prefillChunk);
    if (c.window < 1 || !needed || c.rows < *needed || c.rows > p.contextLength)
      return fail(name + ": " + std::to_string(c.rows) + " rows for a window of " +
                  std::to_string(c.window) + ": expected window - 1 + tfm.prefill_chunk (" +
                  std::to_string(p.prefillChunk) + ") to tfm.context_length (" +
                  std::to_string(p.contextLength) + ")");
    return llvm::Error::success();
  }

  llvm::Error checkKernels() {
    for (const Kernel &k : p.kernels) {
      if (k.ops.size() > kMaxKernelOps)
        return fail("kernel '" + k.name + "': " + std::to_string(k.ops.size()) +
                    " ops, more than the " + std::to_string(kMaxKernelOps) +
                    " a kernel may hold (fusion splits larger regions)");
      if (llvm::Error e = checkTerms(k))
        return e;
    }
    return llvm::Error::success();
  }

  /// kMaxKernelTerms: each op counted once per path to it.
  llvm::Error checkTerms(const Kernel &k) {
    std::vector<int64_t> terms(k.params.size(), 1);
    for (const KernelOp &op : k.ops) {
      int64_t sum = 1;
      for (int operand : op.operands) {
        if (operand < 0 || operand >= static_cast<int>(terms.size()))
          return fail("kernel '" + k.name + "': an op reads value " + std::to_string(operand) +
                      " of " + std::to_string(terms.size()) + " defined before it");
        sum = std::min(sum + terms[operand], kMaxKernelTerms + 1);
      }
      if (sum > kMaxKernelTerms)
        return fail("kernel '" + k.name + "': op " + std::to_string(terms.size() - k.params.size()) +
                    " (" + opKindName(op.kind()) + ") unfolds to more than " +
                    std::to_string(kMaxKernelTerms) +
                    " terms (values read more than once, chained): expected at most " +
                    std::to_string(kMaxKernelTerms));
      terms.push_back(sum);
    }
    return llvm::Error::success();
  }

  /// Rows of an arena value or logits bound to `param`: the chunk for token
  /// rows of any count, else its shape's.
  int64_t rowBound(const KernelParam &param) const {
    return param.shape.front() == kDynamicRows ? p.prefillChunk : param.shape.front();
  }

  llvm::Error checkBinding(const std::string &where, const KernelParam &q, const Binding &b,
                           int64_t arenaBytes, EntryKind kind) {
    switch (b.storage) {
    case Storage::Weight: {
      if (q.isOutput || b.index < 0 || b.index >= static_cast<int64_t>(p.weights.size()))
        return fail(where + ": bound to weight " + std::to_string(b.index) + " of " +
                    std::to_string(p.weights.size()) + (q.isOutput ? ", which it would write" : ""));
      const WeightInfo &w = p.weights[b.index];
      if (q.shape != w.shape || q.type != w.type)
        return fail(where + " is " + paramText(q) + ", but its weight " + quoted(w.name) +
                    " is " + shapeText(w.shape) + " " + w.type.name());
      return llvm::Error::success();
    }
    case Storage::Cache: {
      if (!q.isCache || b.index < 0 || b.index >= static_cast<int64_t>(p.caches.size()))
        return fail(where + ": bound to cache " + std::to_string(b.index) + " of " +
                    std::to_string(p.caches.size()) +
                    (q.isCache ? "" : ", but the parameter is not a cache"));
      const CacheBuffer &c = p.caches[b.index];
      if (q.shape != std::vector<int64_t>{c.rows, c.cols} || q.type.block ||
          q.type.plain != c.type || q.cacheLayout != c.layout)
        return fail(where + " is " + paramText(q) + ", but its cache " + quoted(c.name) + " is [" +
                    std::to_string(c.rows) + ", " + std::to_string(c.cols) + "] " +
                    dtypeName(c.type) +
                    (q.cacheLayout != c.layout ? " in another layout" : ""));
      // A source cache's rows are the source's: written by encode (at
      // position 0), read by the decoder's entries, through parameters that
      // say so; any other cache's rows are positions.
      if (q.sourceCache != c.source || (c.source && q.isOutput != (kind == EntryKind::Encode)))
        return fail(where + (q.sourceCache ? " reads a source cache" : " is a cache") + ", but " +
                    quoted(c.name) + (c.source ? " is a source cache, which encode writes and "
                                                 "the decoder's entries read"
                                               : " is a self-attention cache"));
      // A read of a sliding cache reaches back no further than its window.
      if (!q.isOutput && (q.slidingWindow > 0) != (c.window > 0))
        return fail(where + (q.slidingWindow > 0 ? " reads a sliding cache" : " reads every position") +
                    ", but its cache " + quoted(c.name) +
                    (c.window > 0 ? " slides" : " holds every position"));
      if (q.slidingWindow > c.window)
        return fail(where + " reads a window of " + std::to_string(q.slidingWindow) +
                    ", but its cache " + quoted(c.name) + " holds a window of " +
                    std::to_string(c.window));
      return llvm::Error::success();
    }
    case Storage::Tokens: {
      int64_t rows = kind == EntryKind::Decode ? 1 : kDynamicRows;
      if (q.isOutput || q.type != ElementEncoding{DType::I32, std::nullopt} ||
          q.shape != std::vector<int64_t>{rows})
        return fail(where + " is " + (q.isOutput ? "written" : paramText(q)) +
                    ", but it is bound to the call's token ids: expected " +
                    shapeText({rows}) + " i32, read only");
      return llvm::Error::success();
    }
    case Storage::Arena: {
      if (q.shape.size() != 2 || q.type != ElementEncoding{} || q.isCache)
        return fail(where + " is " + paramText(q) +
                    ", but it is bound to the arena: expected f32 rows");
      std::optional<int64_t> bytes = times(rowBound(q), q.shape[1] * 4);
      std::optional<int64_t> end = bytes ? plus(b.offset, *bytes) : std::nullopt;
      if (b.offset < 0 || b.offset % kAlignment != 0 || !end || *end > arenaBytes)
        return fail(where + ": arena offset " + std::to_string(b.offset) + " and " +
                    (bytes ? std::to_string(*bytes) : std::string("too many")) +
                    " bytes, but the entry's tfm.arena_bytes is " + std::to_string(arenaBytes) +
                    ": expected a 64-byte aligned value inside the arena");
      return llvm::Error::success();
    }
    case Storage::Logits: {
      // The caller's buffer holds vocab_size floats (encode: the hidden
      // size's) for each row the entry returns: the last (prefill, decode)
      // or every one (score, encode).
      bool everyRow = outputsEveryRow(kind);
      int64_t width = p.outputWidth(kind);
      bool rowsMatch =
          everyRow ? q.tokenRows && q.shape.front() == kDynamicRows
                   : q.shape.front() == 1 && (kind == EntryKind::Decode || !q.tokenRows);
      if (!q.isOutput || q.shape.size() != 2 || q.shape[1] != width ||
          q.type != ElementEncoding{} || !rowsMatch)
        return fail(where + " is " + (q.isOutput ? "" : "read, ") + paramText(q) +
                    (q.tokenRows ? " of token rows" : "") + ", but it is bound to the " +
                    (kind == EntryKind::Encode ? "hidden states" : "logits") +
                    ": expected the output " + (everyRow ? "[?, " : "[1, ") +
                    std::to_string(width) + "] f32" +
                    (everyRow ? " of every token row" : " of the last row"));
      return llvm::Error::success();
    }
    }
    return llvm::Error::success();
  }

  llvm::Error checkEntry(const EntryPoint &entry) {
    const std::string kind = entryName(entry.kind);
    if (entry.arenaBytes < 0)
      return fail("entry '" + kind + "': tfm.arena_bytes " + std::to_string(entry.arenaBytes) +
                  ", expected at least 0");
    int logitsWriters = 0;
    std::map<int64_t, ArenaValue> arena; // by first byte: what each launch wrote
    for (size_t i = 0; i < entry.launches.size(); ++i) {
      const Launch &l = entry.launches[i];
      std::string launch = "entry '" + kind + "' launch " + std::to_string(i);
      if (l.kernel < 0 || l.kernel >= static_cast<int>(p.kernels.size()))
        return fail(launch + ": kernel " + std::to_string(l.kernel) + " of " +
                    std::to_string(p.kernels.size()));
      const Kernel &k = p.kernels[l.kernel];
      launch += " of kernel '" + k.name + "'";
      if (l.bindings.size() != k.params.size())
        return fail(launch + ": " + std::to_string(l.bindings.size()) + " arguments for " +
                    std::to_string(k.params.size()) + " parameters");
      for (size_t j = 0; j < k.params.size(); ++j) {
        std::string where = launch + ": parameter " + std::to_string(j);
        if (llvm::Error e =
                checkBinding(where, k.params[j], l.bindings[j], entry.arenaBytes, entry.kind))
          return e;
        logitsWriters += l.bindings[j].storage == Storage::Logits;
      }
      if (llvm::Error e = checkArenaFlow(launch, k, l, i, arena))
        return e;
    }
    if (logitsWriters != 1)
      return fail("entry '" + kind + "': " + std::to_string(logitsWriters) +
                  " launches write the logits, expected exactly one");
    return llvm::Error::success();
  }

  /// The bytes [begin, end) of an arena binding.
  std::pair<int64_t, int64_t> arenaBytesOf(const KernelParam &q, const Binding &b) const {
    return {b.offset, b.offset + rowBound(q) * q.shape[1] * 4};
  }

  /// Reads take whole values written before and not overwritten since;
  /// a launch's outputs overlap none of its arena arguments; then the
  /// outputs replace whatever they overlap.
  llvm::Error checkArenaFlow(const std::string &launch, const Kernel &k, const Launch &l,
                             size_t index, std::map<int64_t, ArenaValue> &arena) {
    std::vector<std::pair<int64_t, int64_t>> outputs, all;
    for (size_t j = 0; j < k.params.size(); ++j) {
      if (l.bindings[j].storage != Storage::Arena)
        continue;
      auto [begin, end] = arenaBytesOf(k.params[j], l.bindings[j]);
      for (auto [otherBegin, otherEnd] : k.params[j].isOutput ? all : outputs)
        if (begin < otherEnd && otherBegin < end)
          return fail(launch + ": its arena bytes " + range(begin, end) + " and " +
                      range(otherBegin, otherEnd) + " overlap, and one of them is written");
      if (k.params[j].isOutput)
        outputs.push_back({begin, end});
      all.push_back({begin, end});
      if (k.params[j].isOutput)
        continue;
      auto value = arena.find(begin);
      if (value == arena.end() || value->second.end != end)
        return fail(launch + ": parameter " + std::to_string(j) + " reads arena bytes " +
                    range(begin, end) + ", which " +
                    (value == arena.end()
                         ? std::string("no earlier launch wrote as one value")
                         : "launch " + std::to_string(value->second.launch) + " wrote as bytes " +
                               range(begin, value->second.end)));
    }
    for (auto [begin, end] : outputs) {
      auto it = arena.upper_bound(begin);
      if (it != arena.begin() && std::prev(it)->second.end > begin)
        --it;
      while (it != arena.end() && it->first < end)
        it = arena.erase(it);
      arena[begin] = {end, index};
    }
    return llvm::Error::success();
  }

  const Program &p;
};

} // namespace

llvm::Error tfm::verifyProgram(const Program &program) { return ProgramVerifier(program).run(); }
