//===- Llama2cCheckpoint.cpp - Bind a llama2.c .bin to a manifest ---------===//
#include "tfm/runtime/Llama2cCheckpoint.h"

#include "tfm/common/Failure.h"
#include "tfm/common/TensorNames.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <tuple>

using namespace tfm;
using namespace tfm::rt;

namespace {

constexpr int64_t kHeaderBytes = 7 * sizeof(int32_t);

/// The header's fields widened to int64 (vocabSize is |vocab_size|), so
/// that neither the negation nor the products below can overflow.
struct Header {
  int64_t dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen;
  bool tied;
};

/// One tensor kind in the file: where layer 0 starts and its shape.
struct Section {
  int64_t offset = 0; // bytes from the start of the file
  std::vector<int64_t> shape;
  bool perLayer = false;
  int64_t bytes = 0; // of one layer's tensor
};

/// Sums and products that remember whether any left int64: header fields
/// near 2^31 describe more bytes than int64 counts.
struct CheckedArithmetic {
  bool overflow = false;
  int64_t add(int64_t a, int64_t b) {
    int64_t r;
    overflow |= llvm::AddOverflow(a, b, r) != 0;
    return r;
  }
  int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    overflow |= llvm::MulOverflow(a, b, r) != 0;
    return r;
  }
};

/// A role's shape in a checkpoint with header `h` (llama2.c's q has dim rows).
std::vector<int64_t> shapeOf(TensorRole role, const Header &h) {
  int64_t kvDim = h.nKvHeads * (h.dim / h.nHeads);
  switch (role) {
  case TensorRole::TokenEmbedding:
  case TensorRole::Output:
    return {h.vocabSize, h.dim};
  case TensorRole::AttnQ:
  case TensorRole::AttnOutput:
    return {h.dim, h.dim};
  case TensorRole::AttnK:
  case TensorRole::AttnV:
    return {kvDim, h.dim};
  case TensorRole::FfnGate:
  case TensorRole::FfnUp:
    return {h.hiddenDim, h.dim};
  case TensorRole::FfnDown:
    return {h.dim, h.hiddenDim};
  default: // the norms
    return {h.dim};
  }
}

/// The llama2.c layout (tfm/common/TensorNames.h: llama2cLayerOrder), keyed
/// by tensor role.
struct Layout {
  std::map<TensorRole, Section> sections;
  int64_t totalBytes = 0;
};

/// The layout a header describes, or std::nullopt when its size does not
/// fit in int64.
std::optional<Layout> layoutOf(const Header &h) {
  Layout l;
  CheckedArithmetic c;
  int64_t at = kHeaderBytes;
  auto place = [&](TensorRole role, bool perLayer) {
    Section s{at, shapeOf(role, h), perLayer};
    s.bytes = sizeof(float);
    for (int64_t d : s.shape)
      s.bytes = c.mul(s.bytes, d);
    at = c.add(at, c.mul(s.bytes, perLayer ? h.nLayers : 1));
    l.sections[role] = s;
  };
  place(TensorRole::TokenEmbedding, false);
  for (TensorRole role : llama2cLayerOrder())
    place(role, true);
  place(TensorRole::OutputNorm, false);
  int64_t headDim = h.dim / h.nHeads;
  // freq_cis_real/imag, unused
  at = c.add(at, c.mul(c.mul(2 * (headDim / 2), h.seqLen), int64_t(sizeof(float))));
  if (!h.tied)
    place(TensorRole::Output, false);
  l.totalBytes = at;
  if (c.overflow)
    return std::nullopt;
  return l;
}

llvm::Expected<Header> readHeader(const std::string &path, llvm::StringRef data,
                                  const tfm::ModelSpec &c) {
  if (static_cast<int64_t>(data.size()) < kHeaderBytes)
    return failure(path + ": " + std::to_string(data.size()) +
                   " bytes, too short for the 28-byte llama2.c header");
  int32_t raw[7];
  std::memcpy(raw, data.data(), sizeof raw);
  const char *names[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                          "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i)
    if (raw[i] == 0 || (raw[i] < 0 && i != 5))
      return failure(path + ": header field " + names[i] + " is " +
                     std::to_string(raw[i]) +
                     (i == 5 ? ", expected a non-zero integer (negative for a separate output "
                               "head; is this a llama2.c checkpoint?)"
                             : ", expected a positive integer (is this a llama2.c checkpoint?)"));
  // Negated in int64: -INT32_MIN does not fit in int32.
  Header h{raw[0], raw[1], raw[2], raw[3], raw[4],
           raw[5] < 0 ? -int64_t(raw[5]) : int64_t(raw[5]), raw[6], raw[5] > 0};

  // Each field as the file has it (vocab_size with its sign), the value
  // compared and the compiled one.
  const std::tuple<int, int64_t, int64_t> fields[] = {
      {0, h.dim, c.dim},           {1, h.hiddenDim, c.hiddenDim},
      {2, h.nLayers, c.nLayers},   {3, h.nHeads, c.nHeads},
      {4, h.nKvHeads, c.nKvHeads}, {5, h.vocabSize, c.vocabSize}};
  for (const auto &[i, found, expected] : fields)
    if (found != expected)
      return failure(path + ": header field " + names[i] + " is " + std::to_string(raw[i]) +
                     (raw[i] < 0 ? " (negative: a separate output head of " +
                                       std::to_string(found) + " tokens)"
                                 : std::string()) +
                     ", the compiled model expects " + std::to_string(expected));
  if (h.tied != c.tiedEmbeddings)
    return failure(path + ": header field vocab_size is " + std::to_string(raw[5]) +
                   (h.tied ? " (output head tied to the embedding)"
                           : " (negative: a separate output head)") +
                   ", the compiled model expects " +
                   (c.tiedEmbeddings ? "tied embeddings" : "a separate output head"));
  if (h.dim % h.nHeads != 0 || h.dim / h.nHeads != c.headDim)
    return failure(path + ": llama2.c checkpoints have head_dim = dim / n_heads = " +
                   std::to_string(h.dim / h.nHeads) +
                   ", the compiled model expects head_dim " + std::to_string(c.headDim));
  return h;
}

} // namespace

llvm::Expected<BoundWeights> tfm::rt::bindLlama2cCheckpoint(const std::string &path,
                                                            const Manifest &manifest,
                                                            WeightMemory memory) {
  auto file = readWeightFile(path, memory, "checkpoint");
  if (!file)
    return file.takeError();
  llvm::StringRef data = (*file)->getBuffer();

  llvm::Expected<Header> header = readHeader(path, data, manifest.config);
  if (!header)
    return header.takeError();
  const int64_t fileBytes = static_cast<int64_t>(data.size());
  std::optional<Layout> described = layoutOf(*header);
  if (!described)
    return failure(path + ": the header's sizes add up to more than 2^63 bytes of tensors, "
                          "the file has " + std::to_string(fileBytes) +
                   " bytes (corrupt header?)");
  const Layout &layout = *described;

  BoundWeights bound;
  for (const TensorSpec &t : manifest.tensors) {
    std::optional<TensorId> id = parseTensorName(t.name);
    auto section = layout.sections.end();
    if (id && id->part == TensorPart::Weight)
      section = layout.sections.find(id->role);
    int64_t layer = id ? id->layer : -1;
    if (section == layout.sections.end() || layer >= header->nLayers)
      return failure(path + ": the compiled model needs tensor " + t.name +
                     ", which a llama2.c checkpoint with " +
                     std::to_string(header->nLayers) + " layers does not hold");
    const Section &s = section->second;
    if (t.dtype != ElementEncoding{})
      return failure(path + ": tensor " + t.name + " is f32, as llama2.c checkpoints hold "
                     "every tensor; this library was compiled to read it as " + t.dtype.name() +
                     " (compile for this file: tfmc --weights-like " + path + ")");
    if (s.shape != t.shape)
      return failure(path + ": tensor " + t.name + " has shape " + formatShape(s.shape) +
                     " in this checkpoint, the compiled model expects " +
                     formatShape(t.shape));
    int64_t begin = s.offset + (layer >= 0 ? layer * s.bytes : 0);
    int64_t end = begin + s.bytes;
    if (end > fileBytes)
      return failure(path + ": tensor " + t.name + " needs bytes " + std::to_string(begin) +
                     ".." + std::to_string(end) + " but the file has only " +
                     std::to_string(fileBytes) + " bytes (truncated checkpoint?)");
    bound.pointers.push_back(data.data() + begin);
  }
  if (fileBytes != layout.totalBytes)
    return failure(path + ": " + std::to_string(fileBytes) +
                   " bytes, but a llama2.c checkpoint with this header is " +
                   std::to_string(layout.totalBytes) + " bytes (" +
                   (fileBytes < layout.totalBytes ? "truncated" : "trailing data") + ")");
  bound.storage.push_back(std::shared_ptr<const llvm::MemoryBuffer>(std::move(*file)));
  return bound;
}
