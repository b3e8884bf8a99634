//===- GgufOutput.cpp - Weights as a GGUF v3 file -------------------------===//
#include "GgufOutput.h"

#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"

#include "RandomValues.h"

#include "tfm/runtime/GgufConfig.h"
#include "tfm/runtime/GgufWriter.h"
#include "tfm/runtime/Progress.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace tfm;

namespace {

/// The tokenizer section of a GGUF: tokenizer.ggml.* (tokens, scores, merges,
/// special ids, ...) and llama.cpp's other tokenizer keys (chat template).
bool isTokenizerKey(llvm::StringRef key) { return key.starts_with("tokenizer."); }

/// Copies the vocabulary's tokenizer keys, its token list padded to the
/// model's vocab_size with unused "[PAD<id>]" tokens as llama.cpp's
/// converters pad one (score -1000, type UNUSED): llama.cpp sizes the
/// embedding by the token list.
llvm::Error addVocabulary(const rt::GgufFile &vocabulary, int64_t vocabSize,
                          rt::GgufWriter &w) {
  constexpr int32_t kUnusedTokenType = 5; // llama_token_type LLAMA_TOKEN_TYPE_UNUSED
  for (const std::string &key : vocabulary.keys()) {
    if (!isTokenizerKey(key))
      continue;
    if (key == "tokenizer.ggml.tokens") {
      llvm::Expected<std::vector<std::string>> tokens = vocabulary.getStringArray(key);
      if (!tokens)
        return tokens.takeError();
      for (int64_t id = static_cast<int64_t>(tokens->size()); id < vocabSize; ++id)
        tokens->push_back("[PAD" + std::to_string(id) + "]");
      w.addStringArray(key, *tokens);
    } else if (key == "tokenizer.ggml.token_type") {
      llvm::Expected<std::vector<int32_t>> types = vocabulary.getI32Array(key);
      if (!types)
        return types.takeError();
      types->resize(vocabSize, kUnusedTokenType);
      w.addI32Array(key, *types);
    } else if (key == "tokenizer.ggml.scores") {
      llvm::Expected<std::vector<float>> scores = vocabulary.getF32Array(key);
      if (!scores)
        return scores.takeError();
      scores->resize(vocabSize, -1000.0f);
      w.addF32Array(key, *scores);
    } else {
      w.addValue(key, *vocabulary.find(key));
    }
  }
  return llvm::Error::success();
}


} // namespace

llvm::Expected<std::unique_ptr<rt::GgufFile>>
tfm::openVocabulary(const std::string &path, const ModelSpec &spec, const std::string &source) {
  llvm::Expected<std::unique_ptr<rt::GgufFile>> file = rt::GgufFile::open(path);
  if (!file)
    return file.takeError();
  const char *key = "tokenizer.ggml.tokens";
  if (!(*file)->has(key))
    return failure(path + ": metadata key '" + key +
                                       "' is missing, expected a vocabulary GGUF (a token "
                                       "list, as llama.cpp's models/ggml-vocab-*.gguf hold)");
  llvm::Expected<std::vector<std::string>> tokens = (*file)->getStringArray(key);
  if (!tokens)
    return tokens.takeError();
  if (static_cast<int64_t>(tokens->size()) > spec.vocabSize)
    return failure(path + ": metadata key '" + key + "' holds " + std::to_string(tokens->size()) +
            " tokens, expected at most the model's vocab_size " +
            std::to_string(spec.vocabSize) + " (" + source + ")");
  return std::move(*file);
}

std::string tfm::writeGgufFile(const ModelSpec &spec, const std::vector<WeightTensor> &tensors,
                               uint64_t seed, const WeightFileType &type,
                               const rt::GgufFile *vocabulary, const std::string &path) {
  // llama.cpp's converter drops RoBERTa's padding rows of the position
  // table, and its bert architecture has no offset to say where they were.
  if (spec.positionOffset > 0)
    return "model '" + spec.name + "' (" + variantName(spec.family) +
           ") reads positions from row " + std::to_string(spec.positionOffset) +
           " of its table, which a GGUF cannot say; write safetensors (--format safetensors)";
  rt::GgufWriter w;
  rt::addGgufModelMetadata(spec, w);
  if (std::optional<uint32_t> fileType = type.llamaFileType())
    w.addU32("general.file_type", *fileType);
  w.setAlignment(32);
  if (vocabulary)
    if (llvm::Error e = addVocabulary(*vocabulary, spec.vocabSize, w))
      return vocabulary->path() + ": " + llvm::toString(std::move(e));
  uint64_t totalBytes = 0;
  std::vector<ElementEncoding> encodings;
  for (const WeightTensor &t : tensors) {
    std::string fallback;
    ElementEncoding stored =
        t.encoding ? *t.encoding
                   : tensorEncoding(type, t.name, t.shape, spec.nLayers, spec.tiedEmbeddings,
                                    fallback);
    if (!fallback.empty())
      llvm::errs() << "tfm-weights: note: " << fallback << "; stored as " << stored.name()
                   << "\n";
    w.addTensor(t.name, t.shape, rt::ggmlTypeOf(stored));
    totalBytes += stored.bytes(t.numElements());
    encodings.push_back(stored);
  }
  rt::addGgufModelConstants(spec, w);

  llvm::Expected<AtomicOutputFile> os = AtomicOutputFile::create(path);
  if (!os)
    return llvm::toString(os.takeError());
  rt::Progress progress("writing weights", totalBytes);
  llvm::Error e = w.write(os->os(), [&](size_t i, llvm::raw_ostream &out) {
    streamRandomTensor(tensors[i], seed, encodings[i], out, progress);
    return llvm::Error::success();
  });
  if (e) // the output is left as it was
    return path + ": " + llvm::toString(std::move(e));
  llvm::Error committed = os->commit();
  return committed ? llvm::toString(std::move(committed)) : "";
}
