//===- TokenizerTestFiles.h - Tokenizer files written by tests -*- C++ -*-===//
#ifndef TFM_RUNTIME_TOKENIZERS_TOKENIZERTESTFILES_H
#define TFM_RUNTIME_TOKENIZERS_TOKENIZERTESTFILES_H

#include "testing/SharedData.h"
#include "testing/TempFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace tfm::rt::testing {

/// A fresh folder under the test temp dir.
inline std::string tempFolder(const std::string &name) {
  std::string dir = tempPath("tfm_tok_" + name);
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

inline std::string writeJson(const std::string &path, llvm::json::Value value) {
  return writeFile(path, llvm::formatv("{0}", value).str());
}

/// Hugging Face's tokenizer.json for GPT-2, made from OpenAI's encoder.json
/// and vocab.bpe, with the merges in either of the forms tokenizer.json
/// files use ("a b" or ["a", "b"]).
inline llvm::json::Object gpt2TokenizerJson(const std::string &encoderPath,
                                            const std::string &bpePath, bool mergesAsPairs) {
  auto vocab = llvm::json::parse(readFile(encoderPath));
  EXPECT_TRUE(bool(vocab)) << llvm::toString(vocab.takeError());
  llvm::json::Array merges;
  llvm::SmallVector<llvm::StringRef> lines;
  std::string bpe = readFile(bpePath);
  llvm::StringRef(bpe).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (line.starts_with("#version"))
      continue;
    auto [left, right] = line.split(' ');
    // std::string copies: a json::Value made from a StringRef only points
    // at the text, which does not outlive this function.
    if (mergesAsPairs)
      merges.push_back(llvm::json::Array{left.str(), right.str()});
    else
      merges.push_back(line.str());
  }
  return llvm::json::Object{
      {"version", "1.0"},
      {"added_tokens",
       llvm::json::Array{llvm::json::Object{{"id", 50256},
                                            {"content", "<|endoftext|>"},
                                            {"single_word", false},
                                            {"lstrip", false},
                                            {"rstrip", false},
                                            {"normalized", true},
                                            {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", llvm::json::Object{{"type", "ByteLevel"},
                                           {"add_prefix_space", false},
                                           {"trim_offsets", true},
                                           {"use_regex", true}}},
      {"post_processor", llvm::json::Object{{"type", "ByteLevel"},
                                            {"add_prefix_space", true},
                                            {"trim_offsets", false},
                                            {"use_regex", true}}},
      {"decoder", llvm::json::Object{{"type", "ByteLevel"}}},
      {"model", llvm::json::Object{{"type", "BPE"},
                                   {"dropout", nullptr},
                                   {"unk_token", nullptr},
                                   {"continuing_subword_prefix", ""},
                                   {"end_of_word_suffix", ""},
                                   {"fuse_unk", false},
                                   {"byte_fallback", false},
                                   {"vocab", std::move(*vocab)},
                                   {"merges", std::move(merges)}}}};
}

} // namespace tfm::rt::testing

#endif // TFM_RUNTIME_TOKENIZERS_TOKENIZERTESTFILES_H
