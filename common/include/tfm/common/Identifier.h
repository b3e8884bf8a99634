//===- Identifier.h - Names that become C symbols and file names -*- C++ -*-===//
//
// A model's name becomes lib<name>.so, <name>.h and the `name` of its
// tfm_model; a kernel's name becomes its C symbol and object file. Such a
// name from a file (a config, a .mlir module) must be a C identifier of
// bounded length: no quote, newline or slash can reach the generated C or a
// path.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_IDENTIFIER_H
#define TFM_COMMON_IDENTIFIER_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace tfm {

/// The longest model or kernel name.
constexpr size_t kMaxIdentifierLength = 64;

/// Whether `name` is a C identifier ([A-Za-z_][A-Za-z0-9_]*) of 1 to
/// kMaxIdentifierLength bytes.
bool isBoundedIdentifier(llvm::StringRef name);

} // namespace tfm

#endif // TFM_COMMON_IDENTIFIER_H
