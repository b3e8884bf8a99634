//===- Attention.cpp - grouped-query attention over a cache ---------------===//
#include "../OpRegistry.h"
#include "tfm/common/RelativeBuckets.h"

#include <cmath>

using namespace Halide;

namespace tfm::kernels {
namespace {

/// One softmax over all the keys of a row: its maximum, the weights, their
/// sum and the values they mix.
void defineAllKeys(AttentionFuncs &at, Func value, Expr kvCol, Var r, const std::string &name) {
  Var s = at.s, h = at.h, dd = at.d;
  at.maxScore = Func(name + "_max");
  at.maxScore(h, r) = Float(32).min();
  at.maxScore(h, r) = max(at.maxScore(h, r), at.score(at.overKeys, h, r));
  at.weight = Func(name + "_weight");
  at.weight(s, h, r) = exp(at.score(s, h, r) - at.maxScore(h, r));
  at.denom = Func(name + "_denom");
  at.denom(h, r) = 0.0f;
  at.denom(h, r) += at.weight(at.overKeys, h, r);
  at.mixed = Func(name + "_mixed");
  at.mixed(dd, h, r) = 0.0f;
  at.mixed(dd, h, r) += at.weight(at.overKeys, h, r) * value(kvCol + dd, at.overKeys);
}

/// FlashAttention: the same softmax per tile of keys, the tiles merged in
/// order with an online softmax. The call's cache window holds `keys` keys
/// from position `firstKey` (0, or a sliding cache's first row) to the last
/// row's; tile t holds the keys from firstKey + t * tile.
void defineKeyTiles(AttentionFuncs &at, Func value, Expr kvCol, Var r, Expr firstKey, Expr keys,
                    int tile, int window, bool causal, const std::string &name) {
  Var s = at.s, h = at.h, dd = at.d, t = at.t;
  at.keyTile = tile;
  at.inTile = RDom(0, tile, name + "_k");
  Expr tileStart = firstKey + t * tile;
  // Causal, by index; else the window's keys, the last tile's end masked.
  Expr lastKey = causal ? Expr(r) : firstKey + keys - 1;
  at.inTile.where(tileStart + at.inTile.x <= lastKey);
  // Clamped to the window as well as masked: bounds inference then keeps
  // the last tile's reads inside the cache the call passes, even for rows
  // a schedule's guarded tail computes past the last.
  Expr key = min(tileStart + at.inTile.x, firstKey + keys - 1);
  // A sliding window's first tile holds keys before it: their scores are
  // the lowest float, whose weights are 0 beside any key of the window's.
  // (A predicate on the keys of a tile instead would leave GPU schedules
  // no bound of a tile's storage.)
  Func score = at.score;
  if (window > 0) {
    score = Func(name + "_windowed");
    score(s, h, r) = select(s > r - window, at.score(s, h, r), Float(32).min());
  }

  at.maxScore = Func(name + "_max");
  at.maxScore(t, h, r) = Float(32).min();
  at.maxScore(t, h, r) = max(at.maxScore(t, h, r), score(key, h, r));
  at.weight = Func(name + "_weight");
  at.weight(s, h, r) = exp(score(s, h, r) - at.maxScore((s - firstKey) / tile, h, r));
  at.denom = Func(name + "_denom");
  at.denom(t, h, r) = 0.0f;
  at.denom(t, h, r) += at.weight(key, h, r);
  at.mixed = Func(name + "_mixed");
  at.mixed(dd, t, h, r) = 0.0f;
  at.mixed(dd, t, h, r) += at.weight(key, h, r) * value(kvCol + dd, key);

  // The running maximum starts at the lowest float, not -inf, and the sums
  // at 0: the first tile's rescaling of them, exp(lowest - max), is 0 or
  // tiny, and multiplies zeros.
  at.tileSummary = Func(name + "_tile_summary");
  at.tileSummary(dd, t, h, r) = Tuple(at.maxScore(t, h, r), at.denom(t, h, r), at.mixed(dd, t, h, r));
  at.overTiles = RDom(0, (keys + tile - 1) / tile, name + "_t");
  if (causal)
    at.overTiles.where(firstKey + at.overTiles.x * tile <= r);
  if (window > 0) // tiles wholly before the window are not visited
    at.overTiles.where(firstKey + at.overTiles.x * tile + tile > r - window + 1);
  Expr u = at.overTiles.x;
  Tuple summary = at.tileSummary(dd, u, h, r);
  at.merged = Func(name + "_merged");
  at.merged(dd, h, r) = Tuple(Float(32).min(), 0.0f, 0.0f);
  Expr runningMax = at.merged(dd, h, r)[0];
  Expr newMax = max(runningMax, summary[0]);
  Expr keep = exp(runningMax - newMax), add = exp(summary[0] - newMax);
  at.merged(dd, h, r) = Tuple(newMax, at.merged(dd, h, r)[1] * keep + summary[1] * add,
                              at.merged(dd, h, r)[2] * keep + summary[2] * add);
}

/// T5's bias of head h for key s and query row r: the table's entry of
/// (bucket of s - r, h). The bucket of every distance up to the maximum is
/// a table of the compiled code (RelativeBuckets.h); longer distances share
/// its ends' buckets.
Expr relativeBias(const Value &table, const AttentionAttrs &attrs, Var h, Var s, Var r,
                  const std::string &name) {
  int maxDistance = static_cast<int>(attrs.relativeMaxDistance);
  int64_t buckets = table.shape.front();
  Halide::Buffer<int32_t> bucketOf(2 * maxDistance + 1, name + "_buckets");
  for (int i = 0; i <= 2 * maxDistance; ++i)
    bucketOf(i) = static_cast<int32_t>(
        relativeBucket(i - maxDistance, !attrs.causal, buckets, attrs.relativeMaxDistance));
  Expr distance = clamp(s - r, -maxDistance, maxDistance) + maxDistance;
  // Clamped (a no-op) for bounds inference, which cannot see the table's.
  Expr bucket = clamp(bucketOf(distance), 0, static_cast<int>(buckets) - 1);
  return table.func(h, bucket);
}

} // namespace

void defineAttention(OpDefinition &d) {
  Value &q = d.operand(0), &kc = d.operand(1), &vc = d.operand(2);
  if (kc.param < 0 || vc.param < 0)
    d.fail("expects its caches to be kernel parameters");
  const auto &attrs = d.attrs<AttentionAttrs>();
  int headDim = static_cast<int>(attrs.headDim);
  int group = static_cast<int>(attrs.nHeads / attrs.nKvHeads);
  KernelAlgorithm &a = d.algorithm;
  Var r = a.row;
  AttentionFuncs &at = d.result.attention;
  at.headDim = headDim;
  at.groupSize = group;
  Var s = at.s, h = at.h, dd = at.d;
  const std::string &name = d.name;

  // Causal: the row at position r reads cache rows 0..r, so the keys a row
  // reduces over depend on the row, and no masked key is computed. Not
  // causal: every row reads the whole window, 0 .. the call's last row. The
  // cache's first row is position 0, or a sliding cache's oldest position
  // (the buffer's min; a constant 0 for a cache of every position).
  at.overDim = RDom(0, headDim, name + "_d");
  // A sliding window also drops the keys more than `window` - 1 before it.
  int window = static_cast<int>(attrs.window);
  Expr firstKey = kc.image.dim(1).min(), keys = kc.image.dim(1).extent();
  at.overKeys = RDom(firstKey, keys, name + "_s");
  if (attrs.causal) // else every key of the call's window: an encoder's text
    at.overKeys.where(at.overKeys.x <= r);
  if (window > 0)
    at.overKeys.where(at.overKeys.x > r - window);
  Expr kvCol = (h / group) * headDim;

  at.dot = Func(name + "_dot");
  at.dot(s, h, r) = 0.0f;
  // A schedule may compute a row block's scores whole, rows past the last
  // included (key tiles, and the fast schedule's prefill), and those must
  // not read queries past it: the row is clamped to the call's last, which
  // is the window's end where the keys are the call's own (causal); a
  // cross-attention's keys are the source's, apart from the queries' rows.
  const tfm::kernels::Value *rows = a.tokenRowsInput();
  Expr lastRow = attrs.causal || !rows
                     ? firstKey + keys - 1
                     : a.firstRow() + rows->image.dim(rows->image.dimensions() - 1).extent() - 1;
  Expr queryRow = min(r, lastRow);
  at.dot(s, h, r) += q.func(h * headDim + at.overDim, queryRow) * kc.func(kvCol + at.overDim, s);
  at.score = Func(name + "_score");
  float scale = attrs.scale > 0.0 ? static_cast<float>(attrs.scale)
                                  : 1.0f / std::sqrt(float(headDim));
  Expr scaled = at.dot(s, h, r) * scale;
  if (attrs.softcap > 0.0)
    scaled = softcapFloat(scaled, attrs.softcap);
  if (!attrs.alibiSlopes.empty()) {
    // The slopes are constants of the generated code: a table Halide embeds
    // in the object file. The bias is computed from the indices per score.
    Halide::Buffer<float> slopes(static_cast<int>(attrs.alibiSlopes.size()), name + "_slopes");
    for (size_t i = 0; i < attrs.alibiSlopes.size(); ++i)
      slopes(static_cast<int>(i)) = attrs.alibiSlopes[i];
    scaled -= slopes(h) * cast<float>(r - s);
  }
  if (d.op.operands.size() > 3) // T5's relative position bias, by bucket
    scaled += relativeBias(d.operand(3), attrs, h, s, r, name);
  at.score(s, h, r) = scaled;

  Expr head = a.col / headDim, inHead = a.col % headDim;
  Func out(name);
  if (attrs.keyTile == 0) {
    defineAllKeys(at, vc.func, kvCol, r, name);
    out(a.col, r) = at.mixed(inHead, head, r) / at.denom(head, r);
  } else {
    defineKeyTiles(at, vc.func, kvCol, r, firstKey, keys, static_cast<int>(attrs.keyTile),
                   window, attrs.causal, name);
    Expr merged = at.merged(inHead, head, r)[2], sum = at.merged(inHead, head, r)[1];
    out(a.col, r) = merged / sum;
  }
  d.result.func = out;
}

} // namespace tfm::kernels
