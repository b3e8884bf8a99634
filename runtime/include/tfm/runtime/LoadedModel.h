//===- LoadedModel.h - A model opened for running ---------------*- C++ -*-===//
//
// What tfm-run runs and what tfm.h's tfm_lm is: the compiled library (found
// and compiled as ModelResolver says), its tokenizer, and its weights bound
// to the manifest, with the threads and device the kernels use. Opening and
// binding are two steps, so that a job that needs no weights (tokenizing)
// stops before reading them.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_LOADEDMODEL_H
#define TFM_RUNTIME_LOADEDMODEL_H

#include "tfm/runtime/BoundWeights.h"
#include "tfm/runtime/ModelResolver.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/Tokenizer.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace tfm::rt {

/// How the weights are held and the kernels run.
struct RunSettings {
  WeightMemory memory = WeightMemory::Mapped;
  int threads = 1;
  std::optional<int> device; // a GPU library's; none: its driver's first
};

class LoadedModel {
public:
  /// Finds (compiling if need be) and opens the model, and loads its
  /// tokenizer.
  static llvm::Expected<std::unique_ptr<LoadedModel>> open(const ModelRequest &request,
                                                           const tfm_model *linked);

  /// Binds the weights and sets the threads and the device; refuses a model
  /// whose weights are not known.
  llvm::Error bind(const RunSettings &settings);
  /// A new sequence through the bound model.
  llvm::Expected<std::unique_ptr<Session>> newSession() const;
  /// `error` of a call, naming the weight tensor to blame when the logits
  /// were not finite (NonFiniteWeights.h).
  llvm::Error explain(llvm::Error error) const;

  const ModelLibrary &library() const { return *resolved.library; }
  const Manifest &manifest() const { return resolved.library->manifest(); }
  const Tokenizer &tokenizer() const { return *tokenizer_; }
  const std::string &weightsPath() const { return resolved.weights; }
  const std::string &tokenizerPath() const { return resolved.tokenizer; }

private:
  LoadedModel() = default;

  ResolvedModel resolved;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::optional<BoundWeights> weights;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_LOADEDMODEL_H
