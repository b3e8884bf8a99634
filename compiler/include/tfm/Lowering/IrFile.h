//===- IrFile.h - Read an untrusted .mlir file within limits ----*- C++ -*-===//
//
// tfmc and tfm-opt read .mlir files a user hands them, which may come from
// anywhere. MLIR's parser, and the verifier after it, recurse once per
// nested region, type, attribute and location: a file of a few hundred
// kilobytes of brackets overflows the stack. So a .mlir file is read
// bounded (a regular file or standard input, of limited size), and its
// nesting is measured on the text, with strings and comments skipped,
// before MLIR sees it. MLIR-free, for both tools.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LOWERING_IRFILE_H
#define TFM_LOWERING_IRFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace tfm {

/// The largest .mlir file read: Llama 2 70B's lowered module, with
/// locations, is 0.6 MB.
constexpr uint64_t kMaxIrFileBytes = 64ull << 20;

/// How deep the brackets of a .mlir file may nest: the modules tfmc writes
/// nest about 8 deep (module, function, region, type, attribute).
constexpr unsigned kMaxIrNesting = 64;

/// Refuses `text`, the contents of `path`, when its brackets ( [ { < nest
/// deeper than `limit`, naming the line and column where they do. `->` and
/// `>=` close nothing.
llvm::Error checkNestingDepth(llvm::StringRef text, llvm::StringRef path,
                              unsigned limit = kMaxIrNesting);

/// The contents of the .mlir file `path` ("-": standard input), refused
/// when it is not a regular file or a pipe, is larger than kMaxIrFileBytes,
/// or nests deeper than kMaxIrNesting; NUL-terminated, as MLIR's parser
/// needs.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readIrFile(llvm::StringRef path);

} // namespace tfm

#endif // TFM_LOWERING_IRFILE_H
