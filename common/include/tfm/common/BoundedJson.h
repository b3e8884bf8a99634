//===- BoundedJson.h - JSON from files, parsed within limits -*- C++ -*-===//
//
// Every JSON a user hands us (config.json, a safetensors header, an index,
// tokenizer.json, vocab.json) is parsed here. llvm::json::parse recurses once
// per nesting level, so a 100 KB file of nested brackets overflows the
// stack; the nesting is measured first, without recursion, and refused past
// a depth no real file of these formats comes near.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_BOUNDEDJSON_H
#define TFM_COMMON_BOUNDEDJSON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstddef>

namespace tfm {

/// Deeper than any config, safetensors header or tokenizer.json (those reach
/// about 8), far below what the recursive parser can take on a thread stack.
constexpr size_t kMaxJsonDepth = 64;

/// Parses `text`, read from `source` (a path, or "path: header"), refusing a
/// nesting deeper than `maxDepth`. Errors start with `source`.
llvm::Expected<llvm::json::Value> parseBoundedJson(llvm::StringRef text, llvm::StringRef source,
                                                   size_t maxDepth = kMaxJsonDepth);

/// parseBoundedJson of a file whose top level must be an object (configs,
/// manifests, tuning files); anything else is refused naming `source`.
llvm::Expected<llvm::json::Object> parseBoundedJsonObject(llvm::StringRef text,
                                                          llvm::StringRef source);

} // namespace tfm

#endif // TFM_COMMON_BOUNDEDJSON_H
