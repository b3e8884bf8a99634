//===- TokenizerTestFiles.h - Tokenizer files written by tests -*- C++ -*-===//
#ifndef TFM_RUNTIME_TOKENIZERS_TOKENIZERTESTFILES_H
#define TFM_RUNTIME_TOKENIZERS_TOKENIZERTESTFILES_H

#include "testing/SharedData.h"
#include "testing/TempFiles.h"

#include "tfm/runtime/GgufFile.h"

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

/// A GGUF's BERT vocabulary as Hugging Face spells it: llama.cpp's
/// converter wrote a word's first pieces with "▁" in front and continuations
/// bare; vocab.txt and tokenizer.json mark continuations with "##".
inline std::vector<std::string> bertPiecesFromGguf(const std::string &ggufPath) {
  auto gguf = GgufFile::open(ggufPath);
  EXPECT_TRUE(bool(gguf)) << llvm::toString(gguf.takeError());
  if (!gguf)
    return {};
  auto tokens = (*gguf)->getStringArray("tokenizer.ggml.tokens");
  EXPECT_TRUE(bool(tokens)) << llvm::toString(tokens.takeError());
  if (!tokens)
    return {};
  std::vector<std::string> pieces;
  for (llvm::StringRef token : *tokens) {
    if (token.starts_with("\xE2\x96\x81"))
      pieces.push_back(token.drop_front(3).str());
    else if (token.starts_with("[") && token.ends_with("]"))
      pieces.push_back(token.str());
    else
      pieces.push_back("##" + token.str());
  }
  return pieces;
}

/// vocab.txt: one piece per line.
inline std::string writeBertVocabTxt(const std::string &path,
                                     const std::vector<std::string> &pieces) {
  std::string text;
  for (const std::string &piece : pieces)
    text += piece + "\n";
  return writeFile(path, text);
}

/// tokenizer.json as Hugging Face's BertTokenizerFast writes an uncased
/// model's: BertNormalizer, BertPreTokenizer, [CLS] $A [SEP], WordPiece.
inline llvm::json::Object bertTokenizerJson(const std::vector<std::string> &pieces) {
  llvm::json::Object vocab;
  llvm::json::Array added;
  llvm::json::Object specialIds;
  for (size_t id = 0; id < pieces.size(); ++id) {
    vocab[pieces[id]] = static_cast<int64_t>(id);
    for (const char *name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
      if (pieces[id] == name) {
        added.push_back(llvm::json::Object{{"id", static_cast<int64_t>(id)},
                                           {"content", name},
                                           {"single_word", false},
                                           {"lstrip", false},
                                           {"rstrip", false},
                                           {"normalized", false},
                                           {"special", true}});
        specialIds[name] = llvm::json::Object{{"id", name},
                                              {"ids", llvm::json::Array{int64_t(id)}},
                                              {"tokens", llvm::json::Array{name}}};
      }
  }
  auto special = [](const char *name) {
    return llvm::json::Object{
        {"SpecialToken", llvm::json::Object{{"id", name}, {"type_id", 0}}}};
  };
  llvm::json::Object sequence{{"Sequence", llvm::json::Object{{"id", "A"}, {"type_id", 0}}}};
  return llvm::json::Object{
      {"version", "1.0"},
      {"added_tokens", std::move(added)},
      {"normalizer", llvm::json::Object{{"type", "BertNormalizer"},
                                        {"clean_text", true},
                                        {"handle_chinese_chars", true},
                                        {"strip_accents", nullptr},
                                        {"lowercase", true}}},
      {"pre_tokenizer", llvm::json::Object{{"type", "BertPreTokenizer"}}},
      {"post_processor",
       llvm::json::Object{{"type", "TemplateProcessing"},
                          {"single", llvm::json::Array{special("[CLS]"), std::move(sequence),
                                                       special("[SEP]")}},
                          {"special_tokens", std::move(specialIds)}}},
      {"decoder", llvm::json::Object{{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
      {"model", llvm::json::Object{{"type", "WordPiece"},
                                   {"unk_token", "[UNK]"},
                                   {"continuing_subword_prefix", "##"},
                                   {"max_input_chars_per_word", 100},
                                   {"vocab", std::move(vocab)}}}};
}

} // namespace tfm::rt::testing

#endif // TFM_RUNTIME_TOKENIZERS_TOKENIZERTESTFILES_H
