//===- ReferenceModel.cpp - A plain C++ Llama behind the model ABI -------===//
//
// A test fixture, not part of the runtime: a straightforward llama2.c-style
// forward pass that exports tfm_model_get() exactly as a tfmc library does,
// for one config fixed by compile definitions. It lets the runtime and the
// e2e scripts be checked against llama2.c's goldens independently of tfmc
// (and tells a tfmc failure apart from a runtime one).
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/model_abi.h"

#include <cmath>
#include <cstring>
#include <string>

namespace {

constexpr int kDim = REF_DIM, kHidden = REF_HIDDEN, kLayers = REF_LAYERS, kHeads = REF_HEADS,
              kKvHeads = REF_KV_HEADS, kVocab = REF_VOCAB, kContext = REF_CONTEXT;
constexpr int kHeadDim = kDim / kHeads, kKvDim = kKvHeads * kHeadDim;
constexpr float kEps = 1e-5f, kTheta = 10000.0f;
constexpr int kPerLayer = 9; // weights per layer, in manifest order

// Activations, laid out in the arena.
struct Scratch {
  float x[kDim], xb[kDim], xb2[kDim], q[kDim], hb[kHidden], hb2[kHidden], att[kContext];
};

const float *weight(const void *const *w, int layer, int which) {
  return static_cast<const float *>(w[1 + layer * kPerLayer + which]);
}

void rmsnorm(float *out, const float *x, const float *w) {
  float ss = 0;
  for (int i = 0; i < kDim; ++i)
    ss += x[i] * x[i];
  float scale = 1.0f / std::sqrt(ss / kDim + kEps);
  for (int i = 0; i < kDim; ++i)
    out[i] = w[i] * (scale * x[i]);
}

void matmul(float *out, const float *x, const float *w, int n, int d) {
  for (int i = 0; i < d; ++i) {
    float v = 0;
    for (int j = 0; j < n; ++j)
      v += w[i * n + j] * x[j];
    out[i] = v;
  }
}

void rope(float *v, int size, int pos) {
  for (int i = 0; i < size; i += 2) {
    int h = i % kHeadDim;
    float angle = pos * std::pow(kTheta, -float(h) / kHeadDim);
    float c = std::cos(angle), s = std::sin(angle), a = v[i], b = v[i + 1];
    v[i] = a * c - b * s;
    v[i + 1] = a * s + b * c;
  }
}

int forward(const void *const *w, void *kvCache, void *arena, int32_t token, int32_t pos,
            float *logits) {
  if (pos < 0 || pos >= kContext)
    return TFM_ERR_CONTEXT;
  Scratch &s = *static_cast<Scratch *>(arena);
  float *keys = static_cast<float *>(kvCache);
  float *values = keys + kLayers * kContext * kKvDim;
  std::memcpy(s.x, static_cast<const float *>(w[0]) + token * kDim, sizeof s.x);

  for (int l = 0; l < kLayers; ++l) {
    float *k = keys + (l * kContext + pos) * kKvDim;
    float *v = values + (l * kContext + pos) * kKvDim;
    rmsnorm(s.xb, s.x, weight(w, l, 0));
    matmul(s.q, s.xb, weight(w, l, 1), kDim, kDim);
    matmul(k, s.xb, weight(w, l, 2), kDim, kKvDim);
    matmul(v, s.xb, weight(w, l, 3), kDim, kKvDim);
    rope(s.q, kDim, pos);
    rope(k, kKvDim, pos);
    for (int h = 0; h < kHeads; ++h) {
      const float *qh = s.q + h * kHeadDim;
      int kvHead = h / (kHeads / kKvHeads);
      float maxScore = -INFINITY;
      for (int t = 0; t <= pos; ++t) {
        const float *kt = keys + (l * kContext + t) * kKvDim + kvHead * kHeadDim;
        float score = 0;
        for (int i = 0; i < kHeadDim; ++i)
          score += qh[i] * kt[i];
        s.att[t] = score / std::sqrt(float(kHeadDim));
        maxScore = std::fmax(maxScore, s.att[t]);
      }
      float sum = 0;
      for (int t = 0; t <= pos; ++t)
        sum += (s.att[t] = std::exp(s.att[t] - maxScore));
      float *out = s.xb + h * kHeadDim;
      std::memset(out, 0, kHeadDim * sizeof(float));
      for (int t = 0; t <= pos; ++t) {
        const float *vt = values + (l * kContext + t) * kKvDim + kvHead * kHeadDim;
        for (int i = 0; i < kHeadDim; ++i)
          out[i] += s.att[t] / sum * vt[i];
      }
    }
    matmul(s.xb2, s.xb, weight(w, l, 4), kDim, kDim);
    for (int i = 0; i < kDim; ++i)
      s.x[i] += s.xb2[i];
    rmsnorm(s.xb, s.x, weight(w, l, 5));
    matmul(s.hb, s.xb, weight(w, l, 6), kDim, kHidden);  // gate
    matmul(s.hb2, s.xb, weight(w, l, 8), kDim, kHidden); // up
    for (int i = 0; i < kHidden; ++i)
      s.hb[i] = s.hb[i] / (1.0f + std::exp(-s.hb[i])) * s.hb2[i];
    matmul(s.xb, s.hb, weight(w, l, 7), kHidden, kDim); // down
    for (int i = 0; i < kDim; ++i)
      s.x[i] += s.xb[i];
  }
  rmsnorm(s.x, s.x, static_cast<const float *>(w[1 + kLayers * kPerLayer]));
  matmul(logits, s.x, static_cast<const float *>(w[0]), kDim, kVocab); // tied head
  return 0;
}

int prefill(const void *const *w, void *kv, void *arena, const int32_t *tokens, int32_t n,
            int32_t pos, float *logits) {
  if (pos < 0 || n < 1 || pos + n > kContext)
    return TFM_ERR_CONTEXT;
  for (int32_t i = 0; i < n; ++i)
    if (int status = forward(w, kv, arena, tokens[i], pos + i, logits))
      return status;
  return 0;
}

int decode(const void *const *w, void *kv, void *arena, int32_t token, int32_t pos,
           float *logits) {
  return forward(w, kv, arena, token, pos, logits);
}

void setNumThreads(int) {} // single-threaded

std::string manifestJson() {
  auto tensor = [](const std::string &name, const std::string &shape) {
    return "{\"name\": \"" + name + "\", \"shape\": " + shape + ", \"dtype\": \"f32\"}";
  };
  auto pair = [](int a, int b) { return "[" + std::to_string(a) + ", " + std::to_string(b) + "]"; };
  std::string d = std::to_string(kDim);
  std::string tensors = tensor("token_embd.weight", pair(kVocab, kDim));
  const std::pair<const char *, std::string> perLayer[kPerLayer] = {
      {"attn_norm", "[" + d + "]"},         {"attn_q", pair(kDim, kDim)},
      {"attn_k", pair(kKvDim, kDim)},       {"attn_v", pair(kKvDim, kDim)},
      {"attn_output", pair(kDim, kDim)},    {"ffn_norm", "[" + d + "]"},
      {"ffn_gate", pair(kHidden, kDim)},    {"ffn_down", pair(kDim, kHidden)},
      {"ffn_up", pair(kHidden, kDim)}};
  for (int l = 0; l < kLayers; ++l)
    for (const auto &[kind, shape] : perLayer)
      tensors += ", " + tensor("blk." + std::to_string(l) + "." + kind + ".weight", shape);
  tensors += ", " + tensor("output_norm.weight", "[" + d + "]");
  return std::string("{\"abi_version\": 1, \"name\": \"") + REF_NAME +
         "\", \"config_hash\": \"reference-fixture\", \"target\": \"host\", "
         "\"schedule\": \"reference\", \"config\": {\"dim\": " + d +
         ", \"hidden_dim\": " + std::to_string(kHidden) +
         ", \"n_layers\": " + std::to_string(kLayers) + ", \"n_heads\": " + std::to_string(kHeads) +
         ", \"n_kv_heads\": " + std::to_string(kKvHeads) +
         ", \"head_dim\": " + std::to_string(kHeadDim) + ", \"vocab_size\": " + std::to_string(kVocab) +
         ", \"context_length\": " + std::to_string(kContext) +
         ", \"norm_eps\": 1e-5, \"rope_theta\": 10000, \"tied_embeddings\": true, \"dtype\": \"f32\", "
         "\"bos_token_id\": 1, \"eos_token_id\": 2, \"family\": \"llama\", \"name\": \"" REF_NAME
         "\"}, \"tensors\": [" + tensors + "]}";
}

} // namespace

extern "C" const tfm_model *tfm_model_get(void) {
  static const std::string manifest = manifestJson();
  static const tfm_model model = {
      TFM_ABI_VERSION, REF_NAME, "reference-fixture", "host", "reference", manifest.c_str(),
      1 + kLayers * kPerLayer + 1, kVocab, kContext, /*prefill_chunk=*/1,
      /*kv_cache_bytes=*/2ull * kLayers * kContext * kKvDim * sizeof(float),
      /*arena_bytes=*/sizeof(Scratch), prefill, decode, setNumThreads};
  return &model;
}
