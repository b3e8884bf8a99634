//===- Program.h - A lowered model, free of MLIR and Halide types -*- C++ -*-===//
//
// The hand-off between the MLIR half of tfmc and the Halide half. After the
// pass pipeline has fused, outlined, laid out the caches, planned memory and
// chosen schedules, the module is read into a Program: the distinct kernels
// (each a small list of typed kernel ops with every shape known) and, per
// entry point, the sequence of kernel launches with the storage each
// argument is bound to. Everything here was decided in the IR; the code
// generators only carry it out.
//
// This header includes neither MLIR nor Halide on purpose: Halide carries its
// own LLVM 14 and the two must never meet in one translation unit. The op
// kinds and their attribute structs are generated from TfmOps.td by
// tfm-tblgen (KernelOps.h.inc), so the ODS is their one source.
//
// Conventions shared by both halves:
//  * Tensors are row-major [rows, cols] (or [cols] for vectors). A tensor
//    whose rows are "token rows" has one row per token of the call; its row
//    index is the token's absolute position in the sequence. Its shape's
//    first entry is the number of rows the kernel is specialised for: 1
//    (decode) or kDynamicRows (prefill, up to Program::prefillChunk rows).
//  * Cache parameters are one layer's keys or values, logically
//    [contextLength, kvDim], laid out as the IR's memref says (CacheLayout).
//    A kernel writes cache rows pos..pos+T-1 (an output parameter) and reads
//    rows 0..pos+T-1 (an input parameter).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PROGRAM_PROGRAM_H
#define TFM_PROGRAM_PROGRAM_H

#include "tfm/common/ElementEncoding.h"
#include "tfm/common/Variants.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace tfm {

#include "tfm/Program/KernelOps.h.inc"

constexpr int64_t kDynamicRows = -1;

/// The most ops a kernel holds. Halide's compile time grows faster than
/// the size of a pipeline: fusion stops growing a region at this size, and
/// a kernel written larger is refused.
constexpr size_t kMaxKernelOps = 64;

/// The most terms a kernel's values unfold to, each op counted once per
/// path to it (tfm.add %x, %x reads %x twice): a schedule that inlines an
/// elementwise op copies it into every reader, so a chain of 64 such adds
/// would be an expression of 2^64 terms. Kernels tfmc builds unfold to a
/// few dozen; fusion stops short of this, and a kernel past it is refused.
constexpr int64_t kMaxKernelTerms = 256;

/// How a cache buffer lies in memory: each position's row contiguous, or
/// each column contiguous across positions (memref strided<[1, rows]>).
enum class CacheLayout { Rows, Transposed };

/// One tensor a generated library expects from its weight file.
struct WeightInfo {
  std::string name;           // e.g. "blk.0.attn_q.weight"
  std::vector<int64_t> shape; // row-major, logical (values, not bytes)
  ElementEncoding type;       // f32, f16, bf16 or a block format
};

/// One layer's key or value cache inside the KV-cache block.
struct CacheBuffer {
  std::string name; // e.g. "blk.0.key"
  int64_t rows = 0, cols = 0;
  DType type = DType::F32; // f32, f16 or bf16
  CacheLayout layout = CacheLayout::Rows;
  int64_t offset = 0; // bytes into the block
  // A sliding cache (tfm.cache_decl's window): the attention window it
  // serves, and where in the block the int64 position of its first row
  // lies. 0 and 0: the cache holds every position from 0.
  int64_t window = 0, baseOffset = 0;
  // A source (cross-attention) cache: rows 0..S-1 hold the encoded
  // source's, and the int64 S lies at baseOffset.
  bool source = false;
};

/// A kernel parameter: one buffer the kernel reads or writes.
struct KernelParam {
  std::string name;
  std::vector<int64_t> shape; // logical (values, not bytes)
  ElementEncoding type;       // i32 tokens, f32 activations, or a weight's encoding
  bool isOutput = false;
  bool tokenRows = false; // rows are positions of the call (see above)
  bool isCache = false;   // one layer of the KV cache (see above)
  bool isWeight = false;  // a tensor of the weight file (launches bind it to one)
  CacheLayout cacheLayout = CacheLayout::Rows;
  // A sliding cache the kernel reads: the window of the attention reading
  // it. Its rows start at a position that moves, not at 0 (CallWindow.h).
  int64_t slidingWindow = 0;
  // A source (cross-attention) cache: its rows are the source's, not the
  // call's positions (CallWindow.h).
  bool sourceCache = false;
};

/// The kind whose attribute struct `attrs` holds (OpAttrs' alternatives are
/// in OpKind order).
inline OpKind kindOf(const OpAttrs &attrs) { return static_cast<OpKind>(attrs.index()); }

/// A kernel op. Operands index the kernel's values: the parameters first
/// (0..params.size()-1), then op results in order. What each kind computes
/// is its ODS description in TfmOps.td.
struct KernelOp {
  OpAttrs attrs;              // the op's typed attributes, which say its kind
  std::vector<int> operands;
  std::vector<int64_t> shape; // result shape
  bool tokenRows = false;     // result rows are token rows

  OpKind kind() const { return kindOf(attrs); }
};

/// One outlined kernel: compiled once, launched from any number of places.
struct Kernel {
  std::string name;     // C symbol of the compiled kernel
  std::string schedule; // the schedule its IR function names
  std::string irHash;   // contentHash of its IR function: with the target
                        // and the compiler, what its object code depends on
  std::string tuningKey; // kernelTuningKey: its IR less name and schedule
  std::vector<KernelParam> params;
  std::vector<KernelOp> ops;
  /// For each output parameter (in params order), the value it receives.
  std::map<int, int> outputValue; // param index -> value index
};

/// Where a launch argument lives at run time.
enum class Storage { Weight, Arena, Cache, Tokens, Logits };

struct Binding {
  Storage storage = Storage::Arena;
  int64_t index = 0;  // Weight: index in Program::weights; Cache: in Program::caches
  int64_t offset = 0; // Arena: byte offset (64-byte aligned)
};

struct Launch {
  int kernel = 0;                // index into Program::kernels
  std::vector<Binding> bindings; // one per kernel parameter, same order
};

/// The entry points of the model ABI (tfm/common/model_abi.h): a
/// decoder's prefill (the last row's logits of up to prefillChunk tokens a
/// call), decode (one token) and score (every row's logits); an encoder's
/// encode (every row's hidden state, the whole text in one call).
enum class EntryKind { Prefill, Decode, Score, Encode };
inline constexpr EntryKind kEntryKinds[] = {EntryKind::Prefill, EntryKind::Decode,
                                            EntryKind::Score, EntryKind::Encode};

/// The entries a model of `architecture` has, each once.
inline std::vector<EntryKind> entryKindsOf(Architecture architecture) {
  switch (architecture) {
  case Architecture::Encoder:
    return {EntryKind::Encode};
  case Architecture::EncoderDecoder:
    return {EntryKind::Encode, EntryKind::Prefill, EntryKind::Decode, EntryKind::Score};
  case Architecture::Decoder:
    break;
  }
  return {EntryKind::Prefill, EntryKind::Decode, EntryKind::Score};
}

/// "prefill", "decode", "score", "encode": the IR's tfm.entry and the
/// driver's names.
inline const char *entryName(EntryKind kind) {
  switch (kind) {
  case EntryKind::Prefill:
    return "prefill";
  case EntryKind::Decode:
    return "decode";
  case EntryKind::Score:
    return "score";
  case EntryKind::Encode:
    return "encode";
  }
  return "";
}

/// Whether the entry's output has a row per token (score's logits,
/// encode's hidden states), not the last token's only.
inline bool outputsEveryRow(EntryKind kind) {
  return kind == EntryKind::Score || kind == EntryKind::Encode;
}

struct EntryPoint {
  EntryKind kind = EntryKind::Prefill;
  std::vector<Launch> launches;
  int64_t arenaBytes = 0;
};

struct Program {
  std::string name;       // the module's name: lib<name>.so, C symbols
  std::string configJson; // canonical config (tfm/common/ModelSpec.h)
  std::string target;     // explicit target string (tfm/common/Targets.h)
  std::string irHash;     // hash of the lowered IR: identifies the library
  /// The config's architecture: which entries the program has.
  Architecture architecture = Architecture::Decoder;
  int64_t contextLength = 0;
  int64_t vocabSize = 0;
  int64_t hiddenSize = 0; // the config's dim: the width of encode's output
  int64_t sourceLength = 0; // an encoder-decoder's: rows of its source caches
  int64_t prefillChunk = 0;
  int64_t kvCacheBytes = 0;
  std::vector<WeightInfo> weights; // manifest order
  std::vector<CacheBuffer> caches;
  std::vector<Kernel> kernels;
  EntryPoint prefill{EntryKind::Prefill}; // kernels specialised for up to prefillChunk rows
  EntryPoint decode{EntryKind::Decode};   // kernels specialised for one row
  /// Like prefill, but its logits have a row per token (token rows): the
  /// Logits binding is [T, V], not the last row.
  EntryPoint score{EntryKind::Score};
  EntryPoint encode{EntryKind::Encode}; // an encoder's only entry

  EntryPoint &entry(EntryKind kind) {
    switch (kind) {
    case EntryKind::Prefill:
      return prefill;
    case EntryKind::Decode:
      return decode;
    case EntryKind::Encode:
      return encode;
    case EntryKind::Score:
      break;
    }
    return score;
  }
  /// The width of an entry's output rows: logits, or hidden states.
  int64_t outputWidth(EntryKind kind) const {
    return kind == EntryKind::Encode ? hiddenSize : vocabSize;
  }
  const EntryPoint &entry(EntryKind kind) const {
    return const_cast<Program *>(this)->entry(kind);
  }
};

} // namespace tfm

#endif // TFM_PROGRAM_PROGRAM_H
