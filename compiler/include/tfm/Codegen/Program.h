//===- Program.h - A lowered model, free of MLIR and Halide types -*- C++ -*-===//
//
// The hand-off between the MLIR half of tfmc and the Halide half. After the
// pass pipeline has fused, outlined and planned memory, the module is read
// into a Program: the distinct kernels (each a small list of primitive ops
// with every shape known) and, per entry point, the sequence of kernel
// launches with the storage each argument is bound to.
//
// This header includes neither MLIR nor Halide on purpose: Halide carries its
// own LLVM 14 and the two must never meet in one translation unit.
//
// Conventions shared by both halves:
//  * Tensors are row-major [rows, cols] (or [cols] for vectors). A tensor
//    whose rows are "token rows" has one row per token of the call; its row
//    index is the token's absolute position in the sequence, so row r of a
//    call at position pos is token r - pos. Its shape's first entry is the
//    number of rows the kernel is specialised for: 1 (decode) or
//    kDynamicRows (prefill, up to Program::prefillChunk rows).
//  * Cache tensors are one layer's keys or values, logically
//    [contextLength, kvDim] (keys are stored transposed: see isKeyCache).
//    A kernel writes cache rows pos..pos+T-1 (an output parameter) and reads
//    rows 0..pos+T-1 (an input parameter).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_PROGRAM_H
#define TFM_CODEGEN_PROGRAM_H

#include "tfm/common/ModelSpec.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tfm {

constexpr int64_t kDynamicRows = -1;

enum class ElemType { F32, I32 };

/// One tensor a generated library expects from its weight file.
struct WeightInfo {
  std::string name;           // e.g. "blk.0.attn_q.weight"
  std::vector<int64_t> shape; // row-major
  ElemType type = ElemType::F32;
};

/// A kernel parameter: one buffer the kernel reads or writes.
struct KernelParam {
  std::string name;
  std::vector<int64_t> shape;
  ElemType type = ElemType::F32;
  bool isOutput = false;
  bool tokenRows = false; // rows are positions of the call (see above)
  bool isCache = false;   // one layer of the KV cache (see above)
  /// A key cache. Keys are stored transposed, [kvDim, contextLength], so
  /// that attention reads each key dimension across positions contiguously.
  /// Set by the code generator from the launches (Storage::KCache), not by
  /// the MLIR half: the physical layout is the kernels' and driver's affair.
  bool isKeyCache = false;
};

/// A primitive op inside a kernel. Operands index the kernel's values: the
/// parameters first (0..params.size()-1), then op results in order.
///
/// kinds and their operands (all f32 unless noted):
///   embedding   (table[V,D], tokens[T] i32)            -> [T,D]
///   add_positions (x[T,D], table[P,D])                 -> [T,D]
///                 x[r] + table[pos(r)], pos(r) = the row's absolute
///                 position (the token-row index)
///   rms_norm    (x[T,D], w[D])        attrs: eps        -> [T,D]
///   layer_norm  (x[T,D], w[D], b[D])  attrs: eps        -> [T,D]
///                 (x - mean) / sqrt(var + eps) * w + b, biased variance
///   linear      (x[T,K], W[N,K] [, bias[N]])            -> [T,N]
///                 x @ W^T (+ bias): the bias is an optional third operand
///   slice_cols  (x[T,N])  attrs: begin, size            -> [T,size]
///                 columns begin..begin+size-1
///   rope        (x[T,H*hd])  attrs: head_dim, theta     -> [T,H*hd]
///                 rotates interleaved pairs (2i, 2i+1) of each head by
///                 angle pos * theta^(-2i/head_dim), pos = the row's position
///   add, mul    (a[T,N], b[T,N])                        -> [T,N]
///   silu        (a[T,N])                                -> [T,N]
///   gelu        (a[T,N])  attrs: approximate            -> [T,N]
///                 approximate 1: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))
///                 ("gelu_new", "gelu_pytorch_tanh"); 0: 0.5x(1 + erf(x/sqrt 2))
///   attention   (q[T,H*hd], kcache[C,KV*hd], vcache[C,KV*hd])
///                 attrs: n_heads, n_kv_heads, head_dim  -> [T,H*hd]
///                 causal: row at position p attends to cache rows 0..p;
///                 head h uses kv head h / (n_heads / n_kv_heads); scores
///                 scaled by 1/sqrt(head_dim) (GPT-2: n_kv_heads = n_heads)
///   last_row    (x[T,N])                                -> [1,N]   row pos+T-1
struct KernelOp {
  std::string kind;
  std::vector<int> operands;
  std::vector<int64_t> shape; // result shape
  bool tokenRows = false;     // result rows are token rows
  std::map<std::string, double> attrs;
};

/// One outlined kernel: compiled once, launched from any number of places.
struct Kernel {
  std::string name;     // C symbol of the compiled kernel
  std::string schedule; // schedule name chosen for this kernel
  std::vector<KernelParam> params;
  std::vector<KernelOp> ops;
  /// For each output parameter (in params order), the value it receives.
  std::map<int, int> outputValue; // param index -> value index
};

/// Where a launch argument lives at run time.
enum class Storage { Weight, Arena, KCache, VCache, Tokens, Logits };

struct Binding {
  Storage storage = Storage::Arena;
  int64_t index = 0;  // Weight: manifest index; KCache/VCache: layer
  int64_t offset = 0; // Arena: byte offset (64-byte aligned)
};

struct Launch {
  int kernel = 0;                // index into Program::kernels
  std::vector<Binding> bindings; // one per kernel parameter, same order
};

struct EntryPoint {
  std::string name;              // "prefill", "decode" or "score"
  std::vector<Launch> launches;
  int64_t arenaBytes = 0;
};

struct Program {
  ModelSpec spec;
  std::vector<WeightInfo> weights; // manifest order
  std::vector<Kernel> kernels;
  EntryPoint prefill; // kernels specialised for up to prefillChunk rows
  EntryPoint decode;  // kernels specialised for one row
  /// Like prefill, but its logits have a row per token (token rows): the
  /// Logits binding is [T, V], not the last row.
  EntryPoint score;
  int64_t prefillChunk = 0;
  int64_t kvCacheBytes = 0; // 2 * nLayers * contextLength * kvDim * 4

  /// Byte offset of one layer's K or V cache inside the KV cache block.
  int64_t cacheOffset(Storage which, int64_t layer) const {
    int64_t layerBytes = spec.contextLength * spec.kvDim() * 4;
    return (2 * layer + (which == Storage::VCache ? 1 : 0)) * layerBytes;
  }
};

} // namespace tfm

#endif // TFM_CODEGEN_PROGRAM_H
