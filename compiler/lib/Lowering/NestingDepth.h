//===- NestingDepth.h - Bound a .mlir file's nesting before it is parsed -*- C++ -*-===//
//
// MLIR's parser, and the verifier after it, recurse once per nested region,
// type, attribute and location: a file of a few hundred kilobytes of
// brackets overflows the stack. A .mlir file is untrusted, so its nesting
// is measured on the text first, with strings and comments skipped, and a
// file nested deeper than any module tfmc writes is refused there.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LOWERING_NESTINGDEPTH_H
#define TFM_LOWERING_NESTINGDEPTH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace tfm {

/// How deep the brackets of a .mlir file may nest: the modules tfmc writes
/// nest about 8 deep (module, function, region, type, attribute).
constexpr unsigned kMaxIrNesting = 64;

/// Refuses `text`, the contents of `path`, when its brackets ( [ { < nest
/// deeper than `limit`, naming the line and column where they do. `->` and
/// `>=` close nothing.
llvm::Error checkNestingDepth(llvm::StringRef text, llvm::StringRef path,
                              unsigned limit = kMaxIrNesting);

} // namespace tfm

#endif // TFM_LOWERING_NESTINGDEPTH_H
