//===- Identifier.cpp - Names that become C symbols and file names --------===//
#include "tfm/common/Identifier.h"

#include "llvm/ADT/StringExtras.h"

bool tfm::isBoundedIdentifier(llvm::StringRef name) {
  if (name.empty() || name.size() > kMaxIdentifierLength || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}
