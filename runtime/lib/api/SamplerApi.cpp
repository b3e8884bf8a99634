//===- SamplerApi.cpp - tfm.h: the samplers tfm-run has -------------------===//
#include "ApiHandles.h"

using namespace tfm::rt;
using tfm::api::fail;
using tfm::api::failNull;
using tfm::api::guarded;

extern "C" tfm_sampler_params tfm_sampler_default_params(void) {
  SamplerOptions o = defaultSamplerOptions();
  return tfm_sampler_params{o.temperature, o.topK,          o.topP, o.minP,
                            o.repeatPenalty, o.repeatLastN, o.seed};
}

extern "C" int tfm_sampler_new(const tfm_sampler_params *params, tfm_sampler **sampler) {
  if (!params)
    return failNull("tfm_sampler_new", "params");
  if (!sampler)
    return failNull("tfm_sampler_new", "sampler");
  *sampler = nullptr;
  return guarded("tfm_sampler_new", [&] {
    SamplerOptions o;
    o.temperature = params->temperature;
    o.topK = params->top_k;
    o.topP = params->top_p;
    o.minP = params->min_p;
    o.repeatPenalty = params->repeat_penalty;
    o.repeatLastN = params->repeat_last_n;
    o.seed = params->seed;
    llvm::Expected<Sampler> created = Sampler::create(o);
    if (!created)
      return fail(created.takeError());
    *sampler = new tfm_sampler{std::move(*created)};
    return 0;
  });
}

extern "C" void tfm_sampler_free(tfm_sampler *sampler) { delete sampler; }

extern "C" int32_t tfm_sampler_sample(tfm_sampler *sampler, const float *logits, int64_t count) {
  if (!logits)
    return failNull("tfm_sampler_sample", "logits");
  if (count < 1)
    return fail("tfm_sampler_sample: count is " + std::to_string(count) +
                ", expected the vocabulary size (1 or more)");
  return guarded("tfm_sampler_sample", [&] { return sampler->sampler.sample(logits, count); });
}

extern "C" void tfm_sampler_accept(tfm_sampler *sampler, int32_t id) {
  sampler->sampler.accept(id);
}
