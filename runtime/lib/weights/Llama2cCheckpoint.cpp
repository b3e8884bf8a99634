//===- Llama2cCheckpoint.cpp - Bind a llama2.c .bin to a manifest ---------===//
#include "tfm/runtime/Llama2cCheckpoint.h"

#include "tfm/common/TensorNames.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <cstring>
#include <map>

using namespace tfm;
using namespace tfm::rt;

namespace {

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

constexpr int64_t kHeaderBytes = 7 * sizeof(int32_t);

struct Header {
  int64_t dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen;
  bool tied;
};

/// One tensor kind in the file: where layer 0 starts and its shape.
struct Section {
  int64_t offset = 0; // bytes from the start of the file
  std::vector<int64_t> shape;
  bool perLayer = false;

  int64_t bytes() const {
    int64_t n = sizeof(float);
    for (int64_t d : shape)
      n *= d;
    return n;
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

Layout layoutOf(const Header &h) {
  Layout l;
  int64_t at = kHeaderBytes;
  auto place = [&](TensorRole role, bool perLayer) {
    Section s{at, shapeOf(role, h), perLayer};
    at += s.bytes() * (perLayer ? h.nLayers : 1);
    l.sections[role] = s;
  };
  place(TensorRole::TokenEmbedding, false);
  for (TensorRole role : llama2cLayerOrder())
    place(role, true);
  place(TensorRole::OutputNorm, false);
  int64_t headDim = h.dim / h.nHeads;
  at += 2 * h.seqLen * (headDim / 2) * int64_t(sizeof(float)); // freq_cis_real/imag, unused
  if (!h.tied)
    place(TensorRole::Output, false);
  l.totalBytes = at;
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
                     ", expected a positive integer (is this a llama2.c checkpoint?)");
  Header h{raw[0], raw[1], raw[2], raw[3], raw[4],
           raw[5] < 0 ? -int64_t(raw[5]) : raw[5], raw[6], raw[5] > 0};

  const std::pair<const char *, std::pair<int64_t, int64_t>> fields[] = {
      {"dim", {h.dim, c.dim}},
      {"hidden_dim", {h.hiddenDim, c.hiddenDim}},
      {"n_layers", {h.nLayers, c.nLayers}},
      {"n_heads", {h.nHeads, c.nHeads}},
      {"n_kv_heads", {h.nKvHeads, c.nKvHeads}},
      {"vocab_size", {h.vocabSize, c.vocabSize}}};
  for (const auto &[field, values] : fields)
    if (values.first != values.second)
      return failure(path + ": header field " + field + " is " +
                     std::to_string(values.first) + ", the compiled model expects " +
                     std::to_string(values.second));
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
                                                            const Manifest &manifest) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return failure(path + ": cannot open the checkpoint: " + file.getError().message());
  llvm::StringRef data = (*file)->getBuffer();

  llvm::Expected<Header> header = readHeader(path, data, manifest.config);
  if (!header)
    return header.takeError();
  Layout layout = layoutOf(*header);
  const int64_t fileBytes = static_cast<int64_t>(data.size());

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
    if (s.shape != t.shape)
      return failure(path + ": tensor " + t.name + " has shape " + formatShape(s.shape) +
                     " in this checkpoint, the compiled model expects " +
                     formatShape(t.shape));
    int64_t begin = s.offset + (layer >= 0 ? layer * s.bytes() : 0);
    int64_t end = begin + s.bytes();
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
