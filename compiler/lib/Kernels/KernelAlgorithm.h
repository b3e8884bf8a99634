//===- KernelAlgorithm.h - A kernel's ops as Halide Funcs -------*- C++ -*-===//
//
// The algorithm half of a kernel: each kernel op of a Program kernel
// becomes one Halide Func (plus the helper Funcs a reduction needs), defined
// by its record in the op registry (OpRegistry.h), with no scheduling at
// all. Schedules (Schedules.h) then decide where each Func is computed; they
// find the Funcs through the records kept here.
//
// Every 2-D value is a Func (col, row) whose row is an absolute position in
// the sequence; a 1-D value is a Func (col).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_KERNELS_KERNELALGORITHM_H
#define TFM_KERNELS_KERNELALGORITHM_H

#include "IntegerProduct.h"
#include "StoredWeight.h"
#include "tfm/Program/Program.h"

#include "Halide.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tfm::kernels {

/// The Funcs behind one attention op, for the schedule to place. With all
/// keys at once (key_tile 0), the softmax is over every key of the row:
/// maxScore, weight, denom and mixed are over `overKeys`. With key tiles
/// (FlashAttention), each tile t has its own maximum, weights, sum and
/// mix (over `inTile`), `tileSummary` holds the three together, and
/// `merged` combines the tiles' summaries in order (over `overTiles`)
/// with an online softmax.
struct AttentionFuncs {
  Halide::Func dot;      // (s, h, row): q . k
  Halide::Func score;    // (s, h, row): dot / sqrt(head_dim)
  Halide::Func maxScore; // (h, row), or (t, h, row) per tile
  Halide::Func weight;   // (s, h, row): exp(score - max of the row, or of s's tile)
  Halide::Func denom;    // (h, row), or (t, h, row): sum of weights
  Halide::Func mixed;    // (d, h, row), or (d, t, h, row): sum of weight * v
  Halide::RDom overDim;  // d in [0, head_dim)
  Halide::RDom overKeys; // s in [0, row]: the keys the row attends to
  Halide::Var s, h, d;
  int headDim = 0;
  int groupSize = 1; // heads reading one KV head (grouped-query attention)
  // Key tiles only:
  int keyTile = 0;
  Halide::Var t;           // a tile of keys
  Halide::RDom inTile;     // the tile's keys up to the row
  Halide::RDom overTiles;  // the tiles after the first, up to the row's
  Halide::Func tileSummary; // (d, t, h, row): {max, sum, mix} of tile t alone; inlined
                            // unless a schedule computes the tiles apart (split-K)
  Halide::Func merged;     // (d, h, row): {max, sum, mix} of the tiles so far
};

/// One value of the kernel: a parameter or an op result.
struct Value {
  const KernelOp *op = nullptr; // null for parameters
  int param = -1;               // parameter index, for parameters
  Halide::Func func;
  std::vector<int64_t> shape;
  bool tokenRows = false;
  // Reductions expose their domain and inputs to the schedule.
  Halide::RDom reduction;             // linear: over K (element, sub-block, block
                                      // for a block format); norms: over D
  std::vector<Halide::Func> rowStats; // norms: per-row statistics (rms_norm:
                                      // 1/rms; layer_norm: mean, 1/std)
  Halide::Func product;               // linear: x @ W^T, before the bias
  bool relativeRows = false;          // linear: the product's rows count from the call's
                                      // first (products of many rows reading row tiles,
                                      // Linear.cpp)
  Halide::Func activations;           // linear: x [T,K], rows past the call clamped (Linear.cpp);
                                      // f32 products of many rows read it in row tiles
                                      // (KernelAlgorithm::rowTiles)
  Halide::Func decodedWeights;        // linear: the weight's values (k, col), or
                                      // (element, sub-block, block, col) for a
                                      // block format
  Halide::Func subBlockAffine;        // and its sub-blocks' multipliers and
                                      // offsets (i, sub-block, block, col)
  std::optional<IntegerProduct> integer; // linear with 8-bit activations (IntegerProduct.h)
  /// Linear with bf16 inputs on AMX's bf16 tiles: the input rounded to
  /// bf16, (j, i, pair, tile) = value 2 * pair + j of row 16 * tile + i
  /// from the call's first; `reduction` is then (j, pair).
  Halide::Func bf16Pairs;
  Halide::ImageParam image;           // input parameters: the buffer
  std::optional<StoredWeight> stored; // weights: how `func` decodes `image`
  AttentionFuncs attention;           // attention only
  /// Functions of an index and the row (position) alone, such as RoPE's
  /// cosine and sine per pair or a head norm's scale per head: schedules
  /// compute them once per call, not once per column that reads them.
  std::vector<Halide::Func> positionTables;
  /// An inlined op whose column c reads other columns of its input than c
  /// and its tile neighbours (half-split RoPE reads c +- rotary_dim/2):
  /// schedules compute the input on its own rather than inside tiles.
  bool readsOtherColumns = false;
};

/// The AMX tiles a target multiplies (tfm/common/Targets.h's amx_int8 and
/// amx_bf16): products of many rows take the forms they need.
struct AmxTiles {
  bool int8 = false; // tdpbssd: 8-bit activations (PieceSums::signedLevels)
  bool bf16 = false; // tdpbf16ps: bf16 inputs (Value::bf16Pairs)
};

/// Whether a target's 8-bit products multiply pairs of bytes (x86's
/// pmaddubsw then pmaddwd: AVX2, and AVX-512 without VNNI), not quads
/// (vpdpbusd, which Halide 14 emits for avx512_sapphirerapids).
bool multipliesBytePairs(const Halide::Target &target);

/// The f32 lanes of a target's widest vectors: 16 with AVX-512, 8 with
/// AVX, else 4.
int targetVectorLanes(const Halide::Target &target);

/// What a kernel reads of its input buffers. Halide's autoschedulers split
/// loops with tails shifted inwards, and a tile of such a split that
/// overhangs a shorter region (a weight's columns in a guarded product,
/// say) starts before it: a Func computed over that tile reads the input
/// before its first element. With EdgeClamped every read goes through the
/// buffer's edge repeated past its bounds, so the extra points of a tile
/// read valid memory, and their results, which no output point needs, are
/// dropped.
enum class InputReads { AsStored, EdgeClamped };

/// How kernels for `target` hold f16 and bf16 values: GPU kernels as bits.
SixteenBitFloats sixteenBitFloatsFor(const Halide::Target &target);

struct KernelAlgorithm {
  AmxTiles amx;
  SixteenBitFloats sixteenBitFloats = SixteenBitFloats::HalideTypes;
  InputReads reads = InputReads::AsStored;
  bool bytePairs = false; // multipliesBytePairs: 8-bit products sum BytePairs
  /// Rows per tile of the activations that f32 products of many rows read
  /// (rowTiles): one vector of the target's f32 lanes (targetVectorLanes),
  /// so that every schedule's vector of rows is one tile's.
  int activationRowTile = 8;
  Halide::Var col{"col"}, row{"row"};
  std::vector<Halide::ImageParam> inputs; // input parameters, params order
  std::vector<Value> values;              // params first, then op results
  std::vector<Halide::Func> outputs;      // output parameters, params order
  std::vector<int> outputValues;          // value feeding each output
  std::vector<const KernelParam *> outputParams;
  std::map<std::string, Halide::Func> ropeTables; // (pair, row) -> {cos, sin}, by angles
  /// Activations as products of many rows read them (Ops/Linear.cpp), by
  /// the activation's name: one for all the products reading it.
  std::map<std::string, Halide::Func> clampedRows;
  /// Those activations (or their bf16 rounding) in tiles of
  /// activationRowTile rows from the call's first, by the activation's
  /// name, as f32 products of many rows read them: (i, k, tile) = value k of row
  /// activationRowTile * tile + i. A tile's rows of one k are contiguous,
  /// and a tile's rows of the whole reduction one contiguous block, so a
  /// register tile's steps stream through memory instead of striding a
  /// whole call's rows apart (the stride that kept a depth block's
  /// activations from staying in L1).
  std::map<std::string, Halide::Func> rowTiles;
  /// The same for bf16 inputs (bf16_input): rounded and widened back, or as
  /// pairs for AMX's bf16 tiles (Value::bf16Pairs).
  std::map<std::string, Halide::Func> bf16Rounded, bf16Pairs;

  /// The token-rows input parameter: its buffer's last dimension is the
  /// call's rows. Null if the kernel has none.
  const Value *tokenRowsInput() const;
  /// The call's first row (its position), from that parameter's buffer.
  Halide::Expr firstRow() const;
};

/// What an op's define function (OpRegistry.h) works with.
struct OpDefinition {
  const Kernel &kernel;
  const KernelOp &op;
  KernelAlgorithm &algorithm;
  Value &result;    // the define function sets result.func and what it exposes
  std::string name; // unique prefix for the op's Funcs

  /// The op's i-th operand; fails naming the kernel and op if it has none.
  Value &operand(size_t i) const;
  template <typename Attrs> const Attrs &attrs() const { return std::get<Attrs>(op.attrs); }
  [[noreturn]] void fail(const std::string &what) const;
};

/// erf of a float expression, within about one unit in the last place
/// (exposed for its test).
Halide::Expr erfFloat(Halide::Expr x);

/// cap * tanh(x / cap) in float (Ops/RowOps.cpp): Gemma 2's soft caps of
/// the attention scores and the logits.
Halide::Expr softcapFloat(Halide::Expr x, double cap);

/// sin and cos of a double angle, as floats, with double arithmetic alone
/// (no library call, hence no stack frame on a GPU), the float nearest the
/// exact value but where it lies within 1e-13 of a rounding boundary
/// (exposed for its test).
std::pair<Halide::Expr, Halide::Expr> sinCosFloat(Halide::Expr angle);

/// Builds the algorithm for a target with the AMX tiles `amx`, whose 8-bit
/// products multiply pairs of bytes where `bytePairs` (multipliesBytePairs),
/// with f32 vectors of `vectorLanes` (targetVectorLanes), reading its
/// inputs as `reads` says, its f16 and bf16 values held as `sixteen` says.
/// Throws std::runtime_error naming the kernel and op on malformed input.
KernelAlgorithm buildKernelAlgorithm(const Kernel &kernel, AmxTiles amx, bool bytePairs,
                                     int vectorLanes, InputReads reads,
                                     SixteenBitFloats sixteen);

} // namespace tfm::kernels

#endif // TFM_KERNELS_KERNELALGORITHM_H
