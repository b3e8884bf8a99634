//===- Manifest.h - What a generated model library expects ------*- C++ -*-===//
//
// The manifest is the JSON a generated library embeds (and writes beside
// itself as manifest.json): its config, and the weight tensors it binds, in
// binding order. Everything the runtime checks a weight file or tokenizer
// against comes from here.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MANIFEST_H
#define TFM_RUNTIME_MANIFEST_H

#include "tfm/Config/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; // "f32"

  int64_t elementCount() const;
};

struct Manifest {
  int64_t abiVersion = 0;
  std::string name;
  std::string configHash;
  std::string target;
  std::string schedule;
  ModelSpec config;
  std::vector<TensorSpec> tensors; // weights[i] binds tensors[i]
};

/// Parses manifest JSON; `source` names where the text came from in errors.
llvm::Expected<Manifest> parseManifest(llvm::StringRef jsonText,
                                       const std::string &source);

/// Formats a shape as "[512, 64]" for messages.
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace tfm::rt

#endif // TFM_RUNTIME_MANIFEST_H
