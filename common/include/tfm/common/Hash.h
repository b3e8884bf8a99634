//===- Hash.h - Stable content hashes ---------------------------*- C++ -*-===//
#ifndef TFM_COMMON_HASH_H
#define TFM_COMMON_HASH_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tfm {

/// LLVM's xxh3 (64 bits) of `text` as 16 lowercase hex digits: the same on
/// every platform and run. Names compiled libraries and cache folders.
std::string contentHash(llvm::StringRef text);

} // namespace tfm

#endif // TFM_COMMON_HASH_H
