//===- Hash.cpp - Stable content hashes -----------------------------------===//
#include "tfm/common/Hash.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

std::string tfm::contentHash(llvm::StringRef text) {
  std::string hex;
  llvm::raw_string_ostream(hex) << llvm::format_hex_no_prefix(llvm::xxh3_64bits(text), 16);
  return hex;
}
