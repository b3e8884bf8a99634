//===- TokenizerFactory.cpp - Pick the reader and settle special tokens ---===//
#include "tfm/runtime/TokenizerFactory.h"

#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/Llama2cTokenizer.h"
#include "tfm/runtime/TokenizerFiles.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <unordered_map>

using namespace tfm::rt;
using tfm::quoted;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

using tfm::failure;

namespace {

std::string joinPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> result(dir);
  path::append(result, name);
  return result.str().str();
}

std::string besides(const std::string &file, llvm::StringRef name) {
  return joinPath(path::parent_path(file), name);
}

/// A vocabulary's token texts and added tokens, seen the same way for both
/// vocabulary kinds while Hugging Face settings are applied.
struct VocabularyView {
  const std::string &source;
  std::vector<std::string> &texts;
  SpecialTokens &special;
  std::vector<AddedToken> added; // as given; new ones are reported through addToken
};

/// The id of the token whose text is `text`: added tokens first (their
/// text is plain; others may be spelled in a byte-level alphabet).
int32_t findToken(const VocabularyView &vocab, llvm::StringRef text) {
  for (const AddedToken &token : vocab.added)
    if (token.text == text)
      return token.id;
  for (size_t id = 0; id < vocab.texts.size(); ++id)
    if (vocab.texts[id] == text)
      return static_cast<int32_t>(id);
  return -1;
}

/// tokenizer_config.json / special_tokens_map.json over the vocabulary's
/// own settings. `addToken` registers an added token the settings declare:
/// one restating a token, or one just past the end of the vocabulary.
template <typename AddToken>
llvm::Error applyHfSettings(const HfTokenizerSettings &settings, VocabularyView vocab,
                            AddToken addToken) {
  for (const AddedToken &token : settings.addedTokens) {
    auto size = static_cast<int32_t>(vocab.texts.size());
    if (token.id < 0 || token.id > size)
      return failure(settings.source + ": added token " + quoted(token.text) + " has id " +
                     std::to_string(token.id) + ", past the end of the vocabulary of " +
                     vocab.source + " (" + std::to_string(size) + " tokens)");
    if (llvm::Error e = addToken(token))
      return e;
    vocab.added.push_back(token);
  }
  for (auto [name, text, id] :
       {std::make_tuple("bos_token", &settings.bosToken, &vocab.special.bos),
        std::make_tuple("eos_token", &settings.eosToken, &vocab.special.eos)}) {
    if (!*text)
      continue;
    *id = findToken(vocab, **text);
    if (*id < 0)
      return failure(settings.source + ": " + name + " " + quoted(**text) +
                     " is not in the vocabulary of " + vocab.source);
  }
  if (settings.addBosToken)
    vocab.special.addBos = *settings.addBosToken;
  return llvm::Error::success();
}

/// Added tokens with an index by id, so that a settings file declaring a
/// million tokens is not a million scans of the list.
class AddedTokenList {
public:
  explicit AddedTokenList(std::vector<AddedToken> &added) : added(added) {
    for (size_t i = 0; i < added.size(); ++i)
      at.emplace(added[i].id, i); // the first entry with an id is the one replaced
  }

  /// `token` in the list, in place of an entry with its id if there is one.
  void replace(const AddedToken &token) {
    auto [it, inserted] = at.emplace(token.id, added.size());
    if (inserted)
      added.push_back(token);
    else
      added[it->second] = token;
  }

private:
  std::vector<AddedToken> &added;
  std::unordered_map<int32_t, size_t> at;
};

/// The model config's ids where the files named none.
void fallBackToConfig(SpecialTokens &special, size_t vocabSize, const tfm::ModelSpec *config) {
  if (!config)
    return;
  auto inVocab = [&](int64_t id) { return id >= 0 && id < static_cast<int64_t>(vocabSize); };
  if (special.bos < 0 && inVocab(config->bosTokenId))
    special.bos = static_cast<int32_t>(config->bosTokenId);
  if (special.eos < 0 && inVocab(config->eosTokenId))
    special.eos = static_cast<int32_t>(config->eosTokenId);
}

llvm::Expected<std::unique_ptr<Tokenizer>>
finishByteLevel(ByteLevelBpeVocabulary vocab, const HfTokenizerSettings *settings,
                const tfm::ModelSpec *config) {
  if (settings) {
    VocabularyView view{vocab.source, vocab.tokens, vocab.special, vocab.added};
    AddedTokenList added(vocab.added);
    // The settings' text of a token is the one Hugging Face uses.
    auto addToken = [&](const AddedToken &token) {
      if (token.id == static_cast<int32_t>(vocab.tokens.size()))
        vocab.tokens.push_back(token.text);
      else
        vocab.tokens[token.id] = token.text;
      added.replace(token);
      return llvm::Error::success();
    };
    if (llvm::Error e = applyHfSettings(*settings, view, addToken))
      return std::move(e);
  }
  fallBackToConfig(vocab.special, vocab.tokens.size(), config);
  // BOS and EOS are special wherever they came from, as Hugging Face
  // registers them.
  for (int32_t id : {vocab.special.bos, vocab.special.eos}) {
    bool known = id < 0 || id >= static_cast<int32_t>(vocab.tokens.size());
    for (const AddedToken &token : vocab.added)
      known = known || token.id == id;
    if (!known)
      vocab.added.push_back({id, vocab.tokens[id], /*special=*/true});
  }
  auto tok = ByteLevelBpeTokenizer::create(vocab);
  if (!tok)
    return tok.takeError();
  return std::unique_ptr<Tokenizer>(std::move(*tok));
}

llvm::Expected<std::unique_ptr<Tokenizer>>
finishSentencePiece(SentencePieceVocabulary vocab, const HfTokenizerSettings *settings,
                    const tfm::ModelSpec *config) {
  if (settings) {
    VocabularyView view{vocab.source, vocab.pieces, vocab.special, vocab.added};
    AddedTokenList added(vocab.added);
    // Tokens the settings add past the pieces become pieces of their kind;
    // ones restating a piece must agree with it.
    auto addToken = [&](const AddedToken &token) -> llvm::Error {
      auto id = static_cast<size_t>(token.id);
      if (id < vocab.pieces.size() && vocab.pieces[id] != token.text)
        return failure(settings->source + ": added token " + std::to_string(id) + " " +
                       quoted(token.text) + " differs from piece " + quoted(vocab.pieces[id]) +
                       " of " + vocab.source);
      if (id == vocab.pieces.size()) {
        vocab.pieces.push_back(token.text);
        vocab.scores.push_back(0.0f);
        vocab.kinds.push_back(token.special ? TokenKind::Control : TokenKind::UserDefined);
      }
      added.replace(token);
      return llvm::Error::success();
    };
    if (llvm::Error e = applyHfSettings(*settings, view, addToken))
      return std::move(e);
  }
  fallBackToConfig(vocab.special, vocab.pieces.size(), config);
  auto tok = SentencePieceTokenizer::create(vocab);
  if (!tok)
    return tok.takeError();
  return std::unique_ptr<Tokenizer>(std::move(*tok));
}

/// BertTokenizerFast's rule: tokenizer_config.json's do_lower_case and
/// strip_accents over the normalizer's.
llvm::Expected<std::unique_ptr<Tokenizer>>
finishWordPiece(WordPieceVocabulary vocab, const HfTokenizerSettings *settings,
                const tfm::ModelSpec *config) {
  if (settings) {
    VocabularyView view{vocab.source, vocab.tokens, vocab.special, vocab.added};
    AddedTokenList added(vocab.added);
    auto addToken = [&](const AddedToken &token) {
      if (token.id == static_cast<int32_t>(vocab.tokens.size())) {
        vocab.tokens.push_back(token.text);
        vocab.continues.push_back(false);
      }
      added.replace(token);
      return llvm::Error::success();
    };
    if (llvm::Error e = applyHfSettings(*settings, view, addToken))
      return std::move(e);
    BertNormalization &n = vocab.normalization;
    if (settings->doLowerCase) {
      n.lowercase = *settings->doLowerCase;
      n.stripAccents = settings->stripAccents.value_or(n.lowercase);
    } else if (settings->stripAccents) {
      n.stripAccents = *settings->stripAccents;
    }
  }
  fallBackToConfig(vocab.special, vocab.tokens.size(), config);
  auto tok = WordPieceTokenizer::create(vocab);
  if (!tok)
    return tok.takeError();
  return std::unique_ptr<Tokenizer>(std::move(*tok));
}

/// The tokenizer of whichever vocabulary a file gave.
llvm::Expected<std::unique_ptr<Tokenizer>> finish(FileVocabulary vocab,
                                                  const HfTokenizerSettings *settings,
                                                  const tfm::ModelSpec *config) {
  if (vocab.byteLevel)
    return finishByteLevel(std::move(*vocab.byteLevel), settings, config);
  if (vocab.wordPiece)
    return finishWordPiece(std::move(*vocab.wordPiece), settings, config);
  return finishSentencePiece(std::move(*vocab.sentencePiece), settings, config);
}

/// `config` is null for a tokenizer used without a model.
llvm::Expected<std::unique_ptr<Tokenizer>> loadByFormat(const std::string &file,
                                                        const tfm::ModelSpec *config) {
  if (!fs::exists(file))
    return failure(file + ": no such tokenizer file");
  if (hasGgufMagic(file)) {
    auto gguf = GgufFile::open(file);
    if (!gguf)
      return gguf.takeError();
    auto vocab = readGgufVocabulary(**gguf);
    if (!vocab)
      return vocab.takeError();
    return finish(std::move(*vocab), nullptr, config);
  }

  llvm::StringRef name = path::filename(file);
  llvm::StringRef extension = path::extension(file);
  if (extension == ".bin") {
    // Without a model, any vocabulary size and llama2.c's BOS 1 and EOS 2.
    auto tok = config ? Llama2cTokenizer::load(file, config->vocabSize,
                                               static_cast<int32_t>(config->bosTokenId),
                                               static_cast<int32_t>(config->eosTokenId))
                      : Llama2cTokenizer::load(file, -1, 1, 2);
    if (!tok)
      return tok.takeError();
    return std::unique_ptr<Tokenizer>(std::move(*tok));
  }

  // Hugging Face formats: the settings files beside them apply.
  auto settings = readHfTokenizerSettings(path::parent_path(file).str());
  if (!settings)
    return settings.takeError();
  if (extension == ".model") {
    auto vocab = readSentencePieceModel(file);
    if (!vocab)
      return vocab.takeError();
    return finishSentencePiece(std::move(*vocab), &*settings, config);
  }
  if (name == "tokenizer.json") {
    auto vocab = readTokenizerJson(file);
    if (!vocab)
      return vocab.takeError();
    return finish(std::move(*vocab), &*settings, config);
  }
  if (name == "vocab.txt") {
    auto vocab = readWordPieceVocab(file);
    if (!vocab)
      return vocab.takeError();
    return finishWordPiece(std::move(*vocab), &*settings, config);
  }
  if (extension == ".json") {
    std::string merges = besides(file, "merges.txt");
    if (!fs::exists(merges))
      merges = besides(file, "vocab.bpe");
    if (!fs::exists(merges))
      return failure(file + ": a BPE vocabulary needs its merges beside it, in merges.txt "
                            "or vocab.bpe; neither exists");
    auto vocab = readVocabAndMerges(file, merges);
    if (!vocab)
      return vocab.takeError();
    return finishByteLevel(std::move(*vocab), &*settings, config);
  }
  return failure(file + ": unknown tokenizer format; expected a GGUF file, tokenizer.json, "
                        "vocab.json or encoder.json (with merges.txt or vocab.bpe beside "
                        "it), BERT's vocab.txt, a SentencePiece .model or a llama2.c .bin");
}

} // namespace

llvm::Expected<std::unique_ptr<Tokenizer>> tfm::rt::loadTokenizer(const std::string &file,
                                                                  const ModelSpec &config) {
  auto tok = loadByFormat(file, &config);
  if (!tok)
    return tok.takeError();
  if ((*tok)->vocabSize() > config.vocabSize)
    return failure(file + ": the tokenizer has " + std::to_string((*tok)->vocabSize()) +
                   " tokens, more than the model's vocabulary of " +
                   std::to_string(config.vocabSize) + " (a tokenizer of another model?)");
  return tok;
}

llvm::Expected<std::unique_ptr<Tokenizer>>
tfm::rt::loadStandaloneTokenizer(const std::string &file) {
  return loadByFormat(file, nullptr);
}

llvm::Expected<std::string> tfm::rt::findTokenizerFile(const std::string &dir) {
  auto in = [&](llvm::StringRef name) { return joinPath(dir, name); };
  // A SentencePiece model first: tokenizer.json beside one is Hugging
  // Face's conversion of it. Llama's is tokenizer.model, T5's spiece.model,
  // CamemBERT's and XLM-R's sentencepiece.bpe.model (a Unigram model).
  for (const char *model : {"tokenizer.model", "spiece.model", "sentencepiece.bpe.model"})
    if (fs::exists(in(model)))
      return in(model);
  // Marian's: two SentencePiece models (source.spm, target.spm) whose pieces
  // vocab.json numbers; not read (its vocab.json is no BPE vocabulary).
  if (fs::exists(in("source.spm")))
    return failure(dir + ": Marian's tokenizer (source.spm and target.spm, numbered by "
                         "vocab.json) is not supported; run the model on token ids "
                         "(libtfm's tfm_seq_encode and tfm_seq_prefill) or with a tokenizer "
                         "file given by --tokenizer");
  if (fs::exists(in("tokenizer.json")))
    return in("tokenizer.json");
  if (fs::exists(in("vocab.json")))
    return in("vocab.json");
  if (fs::exists(in("vocab.txt")))
    return in("vocab.txt");
  return failure(dir + ": no tokenizer found; expected tokenizer.json, vocab.json with "
                       "merges.txt, vocab.txt (BERT's) or a SentencePiece model "
                       "(tokenizer.model, spiece.model, sentencepiece.bpe.model)");
}
