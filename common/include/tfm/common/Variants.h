//===- Variants.h - What a model config chooses between, as types -*- C++ -*-===//
//
// A model's family, positional scheme, norm, norm position, activation and
// feed-forward kind are enum classes. Each is listed once, below, with the
// name configs, manifests and the IR's canonical JSON spell it: the enum
// and its name table are generated from that one list, so they cannot
// disagree, and code chooses between values with exhaustive switches
// (-Werror=switch), so that a new value makes the compiler list every
// place that must handle it. parseVariant and variantName are the only
// places a name is compared.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_VARIANTS_H
#define TFM_COMMON_VARIANTS_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tfm {

// Each list: X(Enumerator, "name").

/// The Hugging Face model_type a config is read as ("transformer": tfm's
/// own, every switch given by name). It picks the tensor names; the other
/// variants fix the computation. Mistral and Qwen 2 and 3 name their
/// tensors as Llama does, Gemma 3 as Gemma 2; CamemBERT and XLM-RoBERTa
/// are RoBERTa, which is BERT with positions offset past the padding id.
#define TFM_FAMILIES(X)                                                                          \
  X(Llama, "llama")                                                                              \
  X(Mistral, "mistral")                                                                          \
  X(Qwen2, "qwen2")                                                                              \
  X(Qwen3, "qwen3")                                                                              \
  X(Gpt2, "gpt2")                                                                                \
  X(Bloom, "bloom")                                                                              \
  X(Mpt, "mpt")                                                                                  \
  X(GptNeox, "gpt_neox")                                                                         \
  X(Falcon, "falcon")                                                                            \
  X(Phi3, "phi3")                                                                                \
  X(Gemma2, "gemma2")                                                                            \
  X(Gemma3, "gemma3_text")                                                                       \
  X(Bert, "bert")                                                                                \
  X(Roberta, "roberta")                                                                          \
  X(Camembert, "camembert")                                                                      \
  X(XlmRoberta, "xlm-roberta")                                                                   \
  X(T5, "t5")                                                                                    \
  X(Marian, "marian")                                                                            \
  X(Transformer, "transformer")

/// What the model computes from its tokens: a decoder's next-token logits
/// (entries prefill, decode, score), an encoder's hidden states, every
/// token attending to every other (entry encode; BERT's embeddings), or
/// both: an encoder over a source text whose output every decoder layer
/// attends to (entry encode, then prefill, decode and score; T5's).
#define TFM_ARCHITECTURES(X)                                                                     \
  X(Decoder, "decoder")                                                                          \
  X(Encoder, "encoder")                                                                          \
  X(EncoderDecoder, "encoder_decoder")

/// How positions reach the model: rotary on q and k, a learned table added
/// to the embedding, the 2017 sinusoid added to it (each pair's sine and
/// cosine side by side), Marian's (the sines in the first half of the
/// columns, the cosines in the second), or none (ALiBi and T5 models).
#define TFM_POSITIONS(X)                                                                         \
  X(Rope, "rope")                                                                                \
  X(Learned, "learned")                                                                          \
  X(Sinusoidal, "sinusoidal")                                                                    \
  X(SinusoidalHalves, "sinusoidal_halves")                                                       \
  X(None, "none")

#define TFM_NORMS(X)                                                                             \
  X(RmsNorm, "rms_norm")                                                                         \
  X(LayerNorm, "layer_norm")

/// Pre-LN: x + sublayer(norm(x)), then a final norm. Post-LN (2017):
/// norm(x + sublayer(x)), and no final norm.
#define TFM_NORM_POSITIONS(X)                                                                    \
  X(Pre, "pre")                                                                                  \
  X(Post, "post")

/// gelu: exact (erf); gelu_tanh: its tanh approximation.
#define TFM_ACTIVATIONS(X)                                                                       \
  X(Silu, "silu")                                                                                \
  X(Gelu, "gelu")                                                                                \
  X(GeluTanh, "gelu_tanh")                                                                       \
  X(Relu, "relu")

/// plain: down(act(up(x))); gated: down(act(gate(x)) * up(x)) (SwiGLU with
/// silu, GeGLU with gelu).
#define TFM_FFN_KINDS(X)                                                                         \
  X(Plain, "plain")                                                                              \
  X(Gated, "gated")

/// What a kernel's matrix products multiply (tfmc --activations, the
/// manifest's "products"): the input as it is, quantized to 8 bits for
/// integer dot products, or rounded to bf16.
#define TFM_PRODUCTS(X)                                                                          \
  X(F32, "f32")                                                                                  \
  X(Int8, "int8")                                                                                \
  X(Bf16, "bf16")

/// What an encoder's embeddings are (tfm-run --pooling): every token's
/// hidden state, their mean, the first token's ([CLS]) or the last's.
#define TFM_POOLINGS(X)                                                                          \
  X(None, "none")                                                                                \
  X(Mean, "mean")                                                                                \
  X(Cls, "cls")                                                                                  \
  X(Last, "last")

#define TFM_VARIANT_ENUMERATOR(value, name) value,
enum class Family { TFM_FAMILIES(TFM_VARIANT_ENUMERATOR) };
enum class Architecture { TFM_ARCHITECTURES(TFM_VARIANT_ENUMERATOR) };
enum class Positions { TFM_POSITIONS(TFM_VARIANT_ENUMERATOR) };
enum class Norm { TFM_NORMS(TFM_VARIANT_ENUMERATOR) };
enum class NormPosition { TFM_NORM_POSITIONS(TFM_VARIANT_ENUMERATOR) };
enum class Activation { TFM_ACTIVATIONS(TFM_VARIANT_ENUMERATOR) };
enum class FfnKind { TFM_FFN_KINDS(TFM_VARIANT_ENUMERATOR) };
enum class Products { TFM_PRODUCTS(TFM_VARIANT_ENUMERATOR) };
enum class Pooling { TFM_POOLINGS(TFM_VARIANT_ENUMERATOR) };
#undef TFM_VARIANT_ENUMERATOR

/// The names of a variant's values, in enumerator order.
template <typename Variant> struct VariantNames;

#define TFM_VARIANT_NAME(value, name) name,
#define TFM_DEFINE_VARIANT_NAMES(Variant, LIST)                                                  \
  template <> struct VariantNames<Variant> {                                                     \
    static constexpr const char *names[] = {LIST(TFM_VARIANT_NAME)};                             \
  };
TFM_DEFINE_VARIANT_NAMES(Family, TFM_FAMILIES)
TFM_DEFINE_VARIANT_NAMES(Architecture, TFM_ARCHITECTURES)
TFM_DEFINE_VARIANT_NAMES(Positions, TFM_POSITIONS)
TFM_DEFINE_VARIANT_NAMES(Norm, TFM_NORMS)
TFM_DEFINE_VARIANT_NAMES(NormPosition, TFM_NORM_POSITIONS)
TFM_DEFINE_VARIANT_NAMES(Activation, TFM_ACTIVATIONS)
TFM_DEFINE_VARIANT_NAMES(FfnKind, TFM_FFN_KINDS)
TFM_DEFINE_VARIANT_NAMES(Products, TFM_PRODUCTS)
TFM_DEFINE_VARIANT_NAMES(Pooling, TFM_POOLINGS)
#undef TFM_DEFINE_VARIANT_NAMES
#undef TFM_VARIANT_NAME

/// The name of `value`: "llama", "rms_norm", ...
template <typename Variant> constexpr const char *variantName(Variant value) {
  return VariantNames<Variant>::names[static_cast<size_t>(value)];
}

/// The value named `name`, or nothing.
template <typename Variant> std::optional<Variant> parseVariant(std::string_view name) {
  size_t i = 0;
  for (const char *known : VariantNames<Variant>::names) {
    if (name == known)
      return static_cast<Variant>(i);
    ++i;
  }
  return std::nullopt;
}

/// Every name, quoted, for messages: "\"llama\", \"gpt2\", ...".
template <typename Variant> std::string variantNameList() {
  std::string list;
  for (const char *known : VariantNames<Variant>::names)
    list += (list.empty() ? "\"" : ", \"") + std::string(known) + "\"";
  return list;
}

} // namespace tfm

#undef TFM_FAMILIES
#undef TFM_ARCHITECTURES
#undef TFM_POSITIONS
#undef TFM_NORMS
#undef TFM_NORM_POSITIONS
#undef TFM_ACTIVATIONS
#undef TFM_FFN_KINDS
#undef TFM_PRODUCTS
#undef TFM_POOLINGS

#endif // TFM_COMMON_VARIANTS_H
