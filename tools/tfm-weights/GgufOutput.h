//===- GgufOutput.h - Weights as a GGUF v3 file -----------------*- C++ -*-===//
//
// Tensors under their manifest (llama.cpp) names and layouts, and the
// metadata llama.cpp writes for the architecture (general.architecture,
// "<arch>.embedding_length", "<arch>.block_count", ...), so the file also
// describes its own model. With a vocabulary (llama.cpp ships one per
// tokenizer as models/ggml-vocab-*.gguf) the file carries its tokenizer too
// and is a complete model file, as `tfm-run --model-dir` takes it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_GGUFOUTPUT_H
#define TFM_WEIGHTS_GGUFOUTPUT_H

#include "tfm/common/WeightFileType.h"
#include "WeightTensors.h"

#include "tfm/runtime/GgufFile.h"

#include <memory>
#include <string>
#include <vector>

namespace tfm {

/// Opens the GGUF at `path` as the vocabulary of a `spec` model described by
/// `source`: it must hold a token list (tokenizer.ggml.tokens) of at most
/// spec.vocabSize tokens, since the model's embedding rows are the token ids.
llvm::Expected<std::unique_ptr<rt::GgufFile>>
openVocabulary(const std::string &path, const ModelSpec &spec, const std::string &source);

/// Writes `tensors` of a `spec` model to `path`, with the tokenizer metadata
/// (every "tokenizer." key) of `vocabulary` when one is given, its token
/// list padded to spec.vocabSize as llama.cpp's converters pad it, each tensor
/// encoded as `type` says (tfm/common/WeightFileType.h). Returns "" or what
/// went wrong; the partial file is removed on failure.
std::string writeGgufFile(const ModelSpec &spec, const std::vector<WeightTensor> &tensors,
                          uint64_t seed, const WeightFileType &type,
                          const rt::GgufFile *vocabulary, const std::string &path);

} // namespace tfm

#endif // TFM_WEIGHTS_GGUFOUTPUT_H
