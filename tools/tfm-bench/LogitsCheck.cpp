//===- LogitsCheck.cpp - Whether two compilations compute the same -------===//
#include "LogitsCheck.h"

#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/WeightLoader.h"

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace {

/// Decode steps whose logits the check compares, after the prefill's.
constexpr int kCheckedDecodeSteps = 8;
/// Largest difference from plain's logits, relative to plain's largest
/// logit, that still computes the same: reassociated f32 sums differ by
/// about 1e-6. Products whose inputs are rounded to bf16 or to 8 bits (the
/// manifest's `products`, tfmc --activations) round otherwise wherever a
/// reassociated sum lands across a rounding step, which the layers amplify
/// (110M Llama, fast against plain: 3.3e-4 in bf16, 1.3e-2 in int8); a
/// wrong schedule is still off by far more.
double productsTolerance(tfm::Products products) {
  switch (products) {
  case tfm::Products::F32:
    return 1e-4;
  case tfm::Products::Int8:
    return 5e-2;
  case tfm::Products::Bf16:
    return 5e-3;
  }
  return 1e-4; // unreachable: the switch names every kind
}

} // namespace

double tfm::bench::checkTolerance(const tfm::Manifest &manifest) {
  double tolerance = 1e-4;
  for (const tfm::KernelSchedule &k : manifest.kernels)
    tolerance = std::max(tolerance, productsTolerance(k.products));
  return tolerance;
}

std::vector<int32_t> tfm::bench::benchPrompt(int tokens, uint32_t vocab) {
  std::vector<int32_t> prompt(tokens);
  uint64_t state = 42;
  for (int32_t &t : prompt) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    t = int32_t((state >> 33) % vocab);
  }
  return prompt;
}

Expected<std::vector<float>> tfm::bench::checkLogits(const std::string &dir,
                                                     const std::string &weights, int promptTokens,
                                                     std::optional<int> device) {
  auto lib = tfm::rt::ModelLibrary::open(dir);
  if (!lib)
    return lib.takeError();
  if (device && (*lib)->onGpu())
    if (Error e = (*lib)->selectDevice(*device))
      return std::move(e);
  const tfm_model &model = (*lib)->model();
  auto bound = tfm::rt::bindWeights(weights, (*lib)->manifest(), tfm::rt::LoadOptions{});
  if (!bound)
    return bound.takeError();
  auto session = tfm::rt::Session::create(model, bound->pointers);
  if (!session)
    return session.takeError();
  std::vector<int32_t> prompt = benchPrompt(promptTokens, model.vocab_size);
  std::vector<float> logits;
  auto append = [&] {
    const float *l = (*session)->logits();
    logits.insert(logits.end(), l, l + model.vocab_size);
  };
  if (Error e = (*session)->prefill(prompt))
    return std::move(e);
  append();
  int32_t token = prompt.back();
  for (int i = 0; i < kCheckedDecodeSteps; ++i) {
    if (Error e = (*session)->decode(token))
      return std::move(e);
    append();
    token = int32_t((token + 7919) % model.vocab_size);
  }
  return logits;
}

double tfm::bench::relativeDifference(const std::vector<float> &got,
                                      const std::vector<float> &want) {
  double largest = 0, worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    largest = std::max(largest, double(std::fabs(want[i])));
    worst = std::max(worst, double(std::fabs(got[i] - want[i])));
  }
  return largest > 0 ? worst / largest : worst;
}
