//===- LoadedModel.cpp - A model opened for running -----------------------===//
#include "tfm/runtime/LoadedModel.h"

#include "tfm/common/Failure.h"
#include "tfm/runtime/NonFiniteWeights.h"
#include "tfm/runtime/TokenizerFactory.h"

using namespace tfm;
using namespace tfm::rt;

llvm::Expected<std::unique_ptr<LoadedModel>> LoadedModel::open(const ModelRequest &request,
                                                               const tfm_model *linked) {
  std::unique_ptr<LoadedModel> loaded(new LoadedModel());
  llvm::Expected<ResolvedModel> resolved = resolveModel(request, linked);
  if (!resolved)
    return resolved.takeError();
  loaded->resolved = std::move(*resolved);
  if (loaded->resolved.loadedTokenizer) {
    loaded->tokenizer_ = std::move(loaded->resolved.loadedTokenizer);
    return loaded;
  }
  auto tokenizer = loadTokenizer(loaded->resolved.tokenizer, loaded->manifest().config);
  if (!tokenizer)
    return tokenizer.takeError();
  loaded->tokenizer_ = std::move(*tokenizer);
  return loaded;
}

llvm::Error LoadedModel::bind(const RunSettings &settings) {
  if (resolved.weights.empty())
    return failure("no weights: pass --weights FILE (safetensors, model.safetensors.index.json, "
                   "GGUF or llama2.c .bin)");
  if (settings.threads < 1)
    return failure("threads is " + std::to_string(settings.threads) + ", expected at least 1");
  llvm::Expected<BoundWeights> bound =
      bindWeights(resolved.weights, manifest(), LoadOptions{true, settings.memory});
  if (!bound)
    return bound.takeError();
  weights = std::move(*bound);
  const tfm_model &model = library().model();
  if (model.set_num_threads)
    model.set_num_threads(settings.threads);
  if (settings.device)
    return library().selectDevice(*settings.device);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Session>> LoadedModel::newSession() const {
  if (!weights)
    return failure("the model's weights are not bound yet");
  return Session::create(library().model(), weights->pointers);
}

llvm::Error LoadedModel::explain(llvm::Error error) const {
  if (!weights)
    return error;
  return explainNonFiniteLogits(std::move(error), *weights, manifest(), resolved.weights);
}
