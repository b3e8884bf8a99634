//===- HuggingFaceTokenizerFiles.cpp - vocab.json, merges.txt, tokenizer.json ===//
#include "tfm/runtime/TokenizerFiles.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/BoundedJson.h"
#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "tfm/runtime/AddedTokens.h"
#include "tfm/runtime/SentencePieceTokenizer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdint>
#include <map>

using namespace tfm::rt;
using tfm::quoted;
namespace json = llvm::json;

using tfm::failure;

namespace {

llvm::Expected<std::string> readText(const std::string &path, const char *what) {
  auto file = tfm::readBoundedFile(path, tfm::kMaxTokenizerFileBytes, what);
  if (!file)
    return file.takeError();
  return (*file)->getBuffer().str();
}

llvm::Expected<json::Value> readJson(const std::string &path, const char *what) {
  llvm::Expected<std::string> text = readText(path, what);
  if (!text)
    return text.takeError();
  llvm::Expected<json::Value> value = tfm::parseBoundedJson(*text, path);
  if (!value)
    return value.takeError();
  if (!value->getAsObject())
    return failure(path + ": the " + what + " is not a JSON object");
  return value;
}

/// Token texts by id, assembled from (text, id) entries; every id from 0 to
/// the largest must be given exactly once.
class TokenTable {
public:
  explicit TokenTable(std::string path) : path(std::move(path)) {}

  /// `replace`: a later entry may restate an id with new text (added
  /// tokens restate vocabulary entries).
  llvm::Error add(const std::string &field, int64_t id, llvm::StringRef text, bool replace) {
    if (id < 0 || id > INT32_MAX)
      return failure(path + ": " + field + " " + quoted(text) + " has id " +
                     std::to_string(id) + ", expected 0..2^31-1");
    auto [it, inserted] = byId.emplace(id, text.str());
    if (!inserted) {
      if (!replace && it->second != text)
        return failure(path + ": " + field + ": id " + std::to_string(id) +
                       " is given to both " + quoted(it->second) + " and " + quoted(text));
      it->second = text.str();
    }
    return llvm::Error::success();
  }

  llvm::Expected<std::vector<std::string>> take() {
    std::vector<std::string> tokens;
    for (auto &[id, text] : byId) {
      if (id != static_cast<int64_t>(tokens.size()))
        return failure(path + ": no token has id " + std::to_string(tokens.size()) +
                       " (ids must run from 0 without gaps)");
      tokens.push_back(std::move(text));
    }
    return tokens;
  }

private:
  std::string path;
  std::map<int64_t, std::string> byId;
};

llvm::Error addVocab(const json::Object &vocab, const std::string &field, TokenTable &table,
                     const std::string &path) {
  for (const auto &[text, idValue] : vocab) {
    std::optional<int64_t> id = idValue.getAsInteger();
    if (!id)
      return failure(path + ": " + field + " " + quoted(text) +
                     " maps to a non-integer; expected its id");
    if (llvm::Error e = table.add(field, *id, text, /*replace=*/false))
      return e;
  }
  return llvm::Error::success();
}

/// One merge spelled "left right".
llvm::Error parseMerge(llvm::StringRef line, const std::string &where,
                       std::vector<std::pair<std::string, std::string>> &merges) {
  auto [left, right] = line.split(' ');
  if (left.empty() || right.empty() || right.contains(' '))
    return failure(where + ": merge " + quoted(line) +
                   ": expected two tokens separated by one space");
  merges.emplace_back(left.str(), right.str());
  return llvm::Error::success();
}

/// An added token's settings; single_word is refused, as matching only
/// whole words is not implemented.
llvm::Expected<AddedToken> parseAddedToken(const json::Object &o, int64_t id,
                                           const std::string &where) {
  std::optional<llvm::StringRef> content = o.getString("content");
  if (!content)
    return failure(where + ": expected a string \"content\"");
  if (o.getBoolean("single_word").value_or(false))
    return failure(where + " (" + quoted(*content) +
                   "): single_word added tokens are not supported");
  AddedToken token;
  token.id = static_cast<int32_t>(id);
  token.text = content->str();
  token.special = o.getBoolean("special").value_or(false);
  token.lstrip = o.getBoolean("lstrip").value_or(false);
  token.rstrip = o.getBoolean("rstrip").value_or(false);
  return token;
}

/// A "bos_token"-like entry: a string, or an object with "content".
std::optional<std::string> tokenText(const json::Object &o, llvm::StringRef key) {
  const json::Value *v = o.get(key);
  if (!v)
    return std::nullopt;
  if (std::optional<llvm::StringRef> s = v->getAsString())
    return s->str();
  if (const json::Object *inner = v->getAsObject())
    if (std::optional<llvm::StringRef> s = inner->getString("content"))
      return s->str();
  return std::nullopt;
}

/// "type" of a tokenizer.json section, or "" for null / absent.
std::string sectionType(const json::Object &root, llvm::StringRef key) {
  if (const json::Object *section = root.getObject(key))
    return section->getString("type").value_or("").str();
  return "";
}

llvm::Error readNormalizer(const json::Object &root, const std::string &path,
                           Normalization &form) {
  std::string type = sectionType(root, "normalizer");
  static const std::pair<const char *, Normalization> forms[] = {
      {"", Normalization::None},     {"NFC", Normalization::NFC},
      {"NFD", Normalization::NFD},   {"NFKC", Normalization::NFKC},
      {"NFKD", Normalization::NFKD}};
  for (const auto &[name, value] : forms)
    if (type == name) {
      form = value;
      return llvm::Error::success();
    }
  return failure(path + ": normalizer " + quoted(type) +
                 " is not supported; expected null, NFC, NFD, NFKC or NFKD");
}

/// The Split regexes of the tokenizer.json files tfm reads, and the word
/// split each is (WordSplit.h matches them by hand).
struct SplitRegex {
  llvm::StringLiteral regex;
  WordSplit split;
};
constexpr SplitRegex kSplitRegexes[] = {
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     WordSplit::Llama3},
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     WordSplit::Qwen2},
};

/// Llama 3's and Qwen's pre_tokenizer: a Split by a known regex, each match
/// a word of its own, then ByteLevel without a regex of its own.
llvm::Expected<WordSplit> readSplitSequence(const json::Object &pre, const std::string &path) {
  const json::Array *steps = pre.getArray("pretokenizers");
  auto unsupported = [&](const std::string &what) {
    return failure(path + ": pre_tokenizer.pretokenizers " + what +
                   "; expected [Split (a known regex, Isolated), ByteLevel (use_regex false)]");
  };
  if (!steps || steps->size() != 2)
    return unsupported(steps ? "has " + std::to_string(steps->size()) + " steps"
                             : "is missing");
  const json::Object *split = (*steps)[0].getAsObject();
  const json::Object *byteLevel = (*steps)[1].getAsObject();
  if (!split || split->getString("type") != "Split")
    return unsupported("does not start with a Split");
  if (!byteLevel || byteLevel->getString("type") != "ByteLevel" ||
      byteLevel->getBoolean("use_regex").value_or(true) ||
      byteLevel->getBoolean("add_prefix_space").value_or(false))
    return unsupported("does not end with ByteLevel (use_regex and add_prefix_space false)");
  if (split->getString("behavior") != "Isolated" || split->getBoolean("invert").value_or(false))
    return unsupported("splits other than Isolated");
  const json::Object *pattern = split->getObject("pattern");
  std::optional<llvm::StringRef> regex = pattern ? pattern->getString("Regex") : std::nullopt;
  if (!regex)
    return unsupported("splits by something other than a Regex");
  for (const SplitRegex &known : kSplitRegexes)
    if (*regex == known.regex)
      return known.split;
  return failure(path + ": pre_tokenizer's Split regex " + quoted(*regex) +
                 " is not one tfm knows; supported: Llama 3's and Qwen 2's");
}

/// The word split of the pre_tokenizer: GPT-2's ByteLevel, or a Split
/// sequence.
llvm::Expected<WordSplit> readPreTokenizer(const json::Object &root, const std::string &path) {
  const json::Object *pre = root.getObject("pre_tokenizer");
  std::string type = sectionType(root, "pre_tokenizer");
  if (pre && type == "Sequence")
    return readSplitSequence(*pre, path);
  if (!pre || type != "ByteLevel")
    return failure(path + ": pre_tokenizer " + quoted(type) +
                   " is not supported; expected ByteLevel (GPT-2's word split) or a Sequence "
                   "of a Split and ByteLevel (Llama 3's, Qwen's)");
  if (pre->getBoolean("add_prefix_space").value_or(false))
    return failure(path + ": pre_tokenizer.add_prefix_space is true; only false (GPT-2's "
                          "setting) is supported");
  if (!pre->getBoolean("use_regex").value_or(true))
    return failure(path + ": pre_tokenizer.use_regex is false; only GPT-2's word split "
                          "(true) is supported");
  return WordSplit::Gpt2;
}

/// The id a TemplateProcessing's special_tokens give the SpecialToken
/// entry `item`, if `item` is one.
llvm::Expected<std::optional<int32_t>> templateSpecialToken(const json::Object &post,
                                                            const json::Value &item,
                                                            const std::string &path) {
  const json::Object *entry = item.getAsObject();
  const json::Object *special = entry ? entry->getObject("SpecialToken") : nullptr;
  if (!special)
    return std::nullopt;
  std::optional<llvm::StringRef> name = special->getString("id");
  const json::Object *tokens = post.getObject("special_tokens");
  const json::Object *named = name && tokens ? tokens->getObject(*name) : nullptr;
  const json::Array *ids = named ? named->getArray("ids") : nullptr;
  std::optional<int64_t> id = ids && ids->size() == 1 ? (*ids)[0].getAsInteger() : std::nullopt;
  if (!id)
    return failure(path + ": post_processor.single names a special token that "
                          "special_tokens does not give exactly one id for");
  if (*id < 0 || *id > INT32_MAX)
    return failure(path + ": post_processor.special_tokens gives " + quoted(*name) +
                   " the id " + std::to_string(*id) + ", expected 0..2^31-1");
  return static_cast<int32_t>(*id);
}

/// TemplateProcessing's "single": the sequence, optionally after one
/// special token (BOS, [CLS]) and before another (BERT's [SEP]).
llvm::Error readTemplate(const json::Object &post, const std::string &path,
                         SpecialTokens &special) {
  const json::Array *single = post.getArray("single");
  auto unsupported = [&]() {
    return failure(path + ": post_processor.single is not supported; expected the input "
                          "sequence, optionally after one special token (and then optionally "
                          "before another)");
  };
  if (!single || single->empty() || single->size() > 3)
    return unsupported();
  size_t sequence = single->size();
  for (size_t i = 0; i < single->size(); ++i) {
    const json::Object *item = (*single)[i].getAsObject();
    if (item && item->getObject("Sequence"))
      sequence = i;
  }
  // encode(text, addBos) frames the text or leaves it bare: an EOS
  // without a BOS before it (T5's "$A </s>") would never be added.
  if (sequence > 1 || single->size() - sequence > 2 || (sequence == 0 && single->size() > 1))
    return unsupported();
  for (size_t i = 0; i < single->size(); ++i) {
    if (i == sequence)
      continue;
    auto id = templateSpecialToken(post, (*single)[i], path);
    if (!id)
      return id.takeError();
    if (!*id)
      return unsupported();
    (i < sequence ? special.bos : special.eos) = **id;
    (i < sequence ? special.addBos : special.addEos) = true;
  }
  return llvm::Error::success();
}

/// BertProcessing and RobertaProcessing: "cls" and "sep" as [text, id].
llvm::Error readClsSep(const json::Object &post, const std::string &path,
                       SpecialTokens &special) {
  for (auto [key, id, add] : {std::make_tuple("cls", &special.bos, &special.addBos),
                              std::make_tuple("sep", &special.eos, &special.addEos)}) {
    const json::Array *pair = post.getArray(key);
    std::optional<int64_t> value =
        pair && pair->size() == 2 ? (*pair)[1].getAsInteger() : std::nullopt;
    if (!value || *value < 0 || *value > INT32_MAX)
      return failure(path + ": post_processor." + key +
                     " is not [text, id] with an id in 0..2^31-1");
    *id = static_cast<int32_t>(*value);
    *add = true;
  }
  return llvm::Error::success();
}

/// The post_processor decides which special tokens encoding puts around
/// the text: a TemplateProcessing whose "single" template is [BOS,]
/// Sequence A[, EOS], or BERT's and RoBERTa's [CLS] A [SEP]. ByteLevel's
/// post-processing only moves offsets; a Sequence (Llama 3's) applies each.
llvm::Error readPostProcessor(const json::Object *post, const std::string &path,
                              SpecialTokens &special) {
  std::string type = post ? post->getString("type").value_or("").str() : "";
  if (type.empty() || type == "ByteLevel")
    return llvm::Error::success();
  if (type == "Sequence") {
    const json::Array *processors = post->getArray("processors");
    if (!processors)
      return failure(path + ": post_processor.processors is missing, expected an array");
    for (const json::Value &processor : *processors)
      if (llvm::Error e = readPostProcessor(processor.getAsObject(), path, special))
        return e;
    return llvm::Error::success();
  }
  if (type == "TemplateProcessing")
    return readTemplate(*post, path, special);
  if (type == "BertProcessing" || type == "RobertaProcessing")
    return readClsSep(*post, path, special);
  return failure(path + ": post_processor " + quoted(type) +
                 " is not supported; expected null, ByteLevel, TemplateProcessing, "
                 "BertProcessing, RobertaProcessing or a Sequence of them");
}

/// The BPE Hugging Face converts from SentencePiece (Gemma's): model
/// byte_fallback, a normalizer replacing " " with "▁", and no pre_tokenizer
/// but a Split at " ", which after that normalizer splits nothing.
llvm::Error checkSentencePieceSpelling(const json::Object &root, const std::string &path) {
  const json::Object *normalizer = root.getObject("normalizer");
  const json::Object *pattern = normalizer ? normalizer->getObject("pattern") : nullptr;
  if (!normalizer || normalizer->getString("type") != "Replace" || !pattern ||
      pattern->getString("String") != " " || normalizer->getString("content") != "\xe2\x96\x81")
    return failure(path + ": model.byte_fallback is true but the normalizer is not a Replace "
                          "of \" \" with \"\xe2\x96\x81\" (SentencePiece's spelling, as Gemma's "
                          "tokenizer.json has it)");
  const json::Object *pre = root.getObject("pre_tokenizer");
  if (!pre)
    return llvm::Error::success();
  const json::Object *split = pre->getObject("pattern");
  if (pre->getString("type") != "Split" || !split || split->getString("String") != " " ||
      pre->getBoolean("invert").value_or(false))
    return failure(path + ": pre_tokenizer " + quoted(sectionType(root, "pre_tokenizer")) +
                   " is not supported beside SentencePiece's spelling; expected null or a "
                   "Split at \" \" (which splits nothing once spaces are \"\xe2\x96\x81\")");
  return llvm::Error::success();
}

llvm::Error checkModel(const json::Object &model, const std::string &path) {
  std::string type = model.getString("type").value_or("").str();
  if (type != "BPE")
    return failure(path + ": model.type is " + quoted(type) +
                   "; supported: BPE, WordPiece and Unigram");
  if (std::optional<double> dropout = model.getNumber("dropout"); dropout && *dropout != 0)
    return failure(path + ": model.dropout is set; BPE dropout is for training only");
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!model.getString(key).value_or("").empty())
      return failure(path + ": model." + key + " is set; byte-level BPE uses none");
  return llvm::Error::success();
}

/// The token texts by id of tokenizer.json's model.vocab and added_tokens,
/// the added tokens also into `added`.
llvm::Expected<std::vector<std::string>> readTokenTexts(const json::Object &root,
                                                       const json::Object &vocabObject,
                                                       const std::string &path,
                                                       std::vector<AddedToken> &added) {
  TokenTable table(path);
  if (llvm::Error e = addVocab(vocabObject, "model.vocab", table, path))
    return std::move(e);
  const json::Array *list = root.getArray("added_tokens");
  for (size_t i = 0; list && i < list->size(); ++i) {
    std::string where = path + ": added_tokens[" + std::to_string(i) + "]";
    const json::Object *o = (*list)[i].getAsObject();
    std::optional<int64_t> id = o ? o->getInteger("id") : std::nullopt;
    if (!id)
      return failure(where + ": expected an object with an integer \"id\"");
    llvm::Expected<AddedToken> token = parseAddedToken(*o, *id, where);
    if (!token)
      return token.takeError();
    if (llvm::Error e = table.add("added_tokens", *id, token->text, /*replace=*/true))
      return std::move(e);
    added.push_back(std::move(*token));
  }
  return table.take();
}

/// The id of model.unk_token, if the model names one.
llvm::Expected<int32_t> readUnknownToken(const json::Object &model,
                                         const std::vector<std::string> &tokens,
                                         const std::string &path) {
  std::optional<llvm::StringRef> unknown = model.getString("unk_token");
  if (!unknown)
    return -1;
  auto it = llvm::find(tokens, *unknown);
  if (it == tokens.end())
    return failure(path + ": model.unk_token " + quoted(*unknown) + " is not in the vocabulary");
  return static_cast<int32_t>(it - tokens.begin());
}

llvm::Expected<ByteLevelBpeVocabulary> readBpeJson(const json::Object &root,
                                                   const json::Object &model,
                                                   const std::string &path) {
  if (llvm::Error e = checkModel(model, path))
    return std::move(e);
  const json::Object *vocabObject = model.getObject("vocab");
  const json::Array *mergeArray = model.getArray("merges");
  if (!vocabObject || !mergeArray)
    return failure(path + ": model.vocab (an object) and model.merges (an array) are required");

  ByteLevelBpeVocabulary vocab;
  vocab.source = path;
  llvm::Expected<std::vector<std::string>> tokens =
      readTokenTexts(root, *vocabObject, path, vocab.added);
  if (!tokens)
    return tokens.takeError();
  vocab.tokens = std::move(*tokens);

  for (size_t i = 0; i < mergeArray->size(); ++i) {
    const json::Value &merge = (*mergeArray)[i];
    std::string where = path + ": model.merges[" + std::to_string(i) + "]";
    if (std::optional<llvm::StringRef> line = merge.getAsString()) {
      if (llvm::Error e = parseMerge(*line, where, vocab.merges))
        return std::move(e);
      continue;
    }
    const json::Array *pair = merge.getAsArray();
    if (!pair || pair->size() != 2 || !(*pair)[0].getAsString() || !(*pair)[1].getAsString())
      return failure(where + ": expected \"left right\" or [\"left\", \"right\"]");
    vocab.merges.emplace_back((*pair)[0].getAsString()->str(), (*pair)[1].getAsString()->str());
  }

  llvm::Expected<int32_t> unknown = readUnknownToken(model, vocab.tokens, path);
  if (!unknown)
    return unknown.takeError();
  vocab.unknown = *unknown;
  vocab.ignoreMerges = model.getBoolean("ignore_merges").value_or(false);
  if (model.getBoolean("byte_fallback").value_or(false)) {
    if (llvm::Error e = checkSentencePieceSpelling(root, path))
      return std::move(e);
    vocab.spelling = TokenSpelling::SentencePiece;
  } else {
    if (llvm::Error e = readNormalizer(root, path, vocab.normalization))
      return std::move(e);
    llvm::Expected<WordSplit> split = readPreTokenizer(root, path);
    if (!split)
      return split.takeError();
    vocab.wordSplit = *split;
  }
  if (llvm::Error e = readPostProcessor(root.getObject("post_processor"), path, vocab.special))
    return std::move(e);
  return vocab;
}

/// A BertNormalizer's settings (strip_accents null: as lowercase), or none
/// of its steps for a null normalizer.
llvm::Error readBertNormalizer(const json::Object &root, const std::string &path,
                               BertNormalization &n) {
  const json::Object *normalizer = root.getObject("normalizer");
  if (!normalizer) {
    n = {false, false, false, false};
    return llvm::Error::success();
  }
  if (normalizer->getString("type") != "BertNormalizer")
    return failure(path + ": normalizer " + quoted(sectionType(root, "normalizer")) +
                   " is not supported beside a WordPiece model; expected BertNormalizer or null");
  n.cleanText = normalizer->getBoolean("clean_text").value_or(true);
  n.separateChineseChars = normalizer->getBoolean("handle_chinese_chars").value_or(true);
  n.lowercase = normalizer->getBoolean("lowercase").value_or(true);
  n.stripAccents = normalizer->getBoolean("strip_accents").value_or(n.lowercase);
  return llvm::Error::success();
}

llvm::Expected<WordPieceVocabulary> readWordPieceJson(const json::Object &root,
                                                      const json::Object &model,
                                                      const std::string &path) {
  const json::Object *vocabObject = model.getObject("vocab");
  if (!vocabObject)
    return failure(path + ": model.vocab (an object) is required");
  if (sectionType(root, "pre_tokenizer") != "BertPreTokenizer")
    return failure(path + ": pre_tokenizer " + quoted(sectionType(root, "pre_tokenizer")) +
                   " is not supported beside a WordPiece model; expected BertPreTokenizer");
  WordPieceVocabulary vocab;
  vocab.source = path;
  llvm::Expected<std::vector<std::string>> tokens =
      readTokenTexts(root, *vocabObject, path, vocab.added);
  if (!tokens)
    return tokens.takeError();
  llvm::Expected<int32_t> unknown = readUnknownToken(model, *tokens, path);
  if (!unknown)
    return unknown.takeError();
  vocab.unknown = *unknown;
  std::string prefix = model.getString("continuing_subword_prefix").value_or("##").str();
  if (prefix.empty())
    return failure(path + ": model.continuing_subword_prefix is empty; expected a mark "
                          "such as \"##\"");
  std::vector<bool> isAdded(tokens->size(), false);
  for (const AddedToken &token : vocab.added)
    isAdded[token.id] = true;
  for (size_t id = 0; id < tokens->size(); ++id) {
    llvm::StringRef text = (*tokens)[id];
    bool continues = !isAdded[id] && text.starts_with(prefix);
    vocab.continues.push_back(continues);
    vocab.tokens.push_back(continues ? text.drop_front(prefix.size()).str() : text.str());
  }
  vocab.maxWordChars = model.getInteger("max_input_chars_per_word").value_or(100);
  if (llvm::Error e = readBertNormalizer(root, path, vocab.normalization))
    return std::move(e);
  if (llvm::Error e = readPostProcessor(root.getObject("post_processor"), path, vocab.special))
    return std::move(e);
  return vocab;
}

} // namespace

/// The steps of a tokenizer.json section: a Sequence's (under `listKey`),
/// or the section alone; none for null. A step that is no object is null.
std::vector<const json::Object *> sequenceSteps(const json::Object *section,
                                                const char *listKey) {
  std::vector<const json::Object *> steps;
  if (section && section->getString("type") == "Sequence") {
    const json::Array *list = section->getArray(listKey);
    for (size_t i = 0; list && i < list->size(); ++i)
      steps.push_back((*list)[i].getAsObject());
  } else if (section) {
    steps.push_back(section);
  }
  return steps;
}

/// The whitespace rules of a Unigram tokenizer.json's normalizer, as
/// Hugging Face converts SentencePiece's normalizer_spec
/// (convert_slow_tokenizer.py's SpmConverter): a Precompiled charsmap (the
/// spec's, base64), and a Strip of the right end with a Replace of runs of
/// spaces, which stand for remove_extra_whitespaces. Anything else is
/// refused, not approximated.
llvm::Error readUnigramNormalizer(const json::Object &root, const std::string &path,
                                  SentencePieceVocabulary &vocab) {
  bool strip = false, collapse = false;
  for (const json::Object *step : sequenceSteps(root.getObject("normalizer"), "normalizers")) {
    std::string type = step ? step->getString("type").value_or("").str() : "";
    const json::Object *pattern = step ? step->getObject("pattern") : nullptr;
    if (type == "Precompiled") {
      std::vector<char> bytes;
      if (llvm::Error e = llvm::decodeBase64(
              step->getString("precompiled_charsmap").value_or(""), bytes))
        return failure(path + ": normalizer's precompiled_charsmap is not base64: " +
                       llvm::toString(std::move(e)));
      vocab.precompiledCharsmap.assign(bytes.begin(), bytes.end());
    } else if (type == "Strip" && !step->getBoolean("left").value_or(true) &&
               step->getBoolean("right").value_or(false)) {
      strip = true;
    } else if (type == "Replace" && pattern && pattern->getString("Regex") == " {2,}") {
      collapse = true;
    } else {
      return failure(path + ": normalizer step " + quoted(type) +
                     " is not supported beside a Unigram model; expected Precompiled, "
                     "Strip (right) and Replace of \" {2,}\", as Hugging Face converts "
                     "SentencePiece's");
    }
  }
  vocab.removeExtraWhitespaces = strip && collapse;
  return llvm::Error::success();
}

/// A Unigram tokenizer.json's pre_tokenizer: Metaspace ("▁" for a space,
/// prepended as SentencePiece's dummy prefix unless prepend_scheme is
/// "never"), after a WhitespaceSplit in older conversions (T5's), which
/// drops extra whitespace.
llvm::Error readMetaspace(const json::Object &root, const std::string &path,
                          SentencePieceVocabulary &vocab) {
  vocab.addDummyPrefix = false;
  for (const json::Object *step : sequenceSteps(root.getObject("pre_tokenizer"), "pretokenizers")) {
    std::string type = step ? step->getString("type").value_or("").str() : "";
    if (type == "WhitespaceSplit") {
      vocab.removeExtraWhitespaces = true;
    } else if (type == "Metaspace" &&
               step->getString("replacement").value_or("\xe2\x96\x81") == "\xe2\x96\x81") {
      std::optional<llvm::StringRef> scheme = step->getString("prepend_scheme");
      vocab.addDummyPrefix = scheme ? *scheme != "never"
                                    : step->getBoolean("add_prefix_space").value_or(true);
    } else {
      return failure(path + ": pre_tokenizer " + quoted(type) +
                     " is not supported beside a Unigram model; expected Metaspace (\"\xe2\x96"
                     "\x81\"), after a WhitespaceSplit or alone");
    }
  }
  return llvm::Error::success();
}

/// A Unigram tokenizer.json (T5's, CamemBERT's, XLM-R's, as Hugging Face
/// converts their SentencePiece models): model.vocab's [piece, score] pairs,
/// unk_id and byte_fallback; added_tokens (special: control pieces, else
/// user-defined); the normalizer's and pre_tokenizer's whitespace rules;
/// the post_processor's framing (T5's EOS).
llvm::Expected<SentencePieceVocabulary> readUnigramJson(const json::Object &root,
                                                        const json::Object &model,
                                                        const std::string &path) {
  const json::Array *pieces = model.getArray("vocab");
  if (!pieces)
    return failure(path + ": model.vocab is missing, expected an array of [piece, score]");
  SentencePieceVocabulary vocab;
  vocab.model = SentencePieceModel::Unigram;
  vocab.source = path;
  for (size_t i = 0; i < pieces->size(); ++i) {
    const json::Array *pair = (*pieces)[i].getAsArray();
    std::optional<llvm::StringRef> piece =
        pair && pair->size() == 2 ? (*pair)[0].getAsString() : std::nullopt;
    std::optional<double> score = pair && pair->size() == 2 ? (*pair)[1].getAsNumber()
                                                            : std::nullopt;
    if (!piece || !score)
      return failure(path + ": model.vocab[" + std::to_string(i) +
                     "]: expected [piece, score], a string and a number");
    vocab.pieces.push_back(piece->str());
    vocab.scores.push_back(static_cast<float>(*score));
    vocab.kinds.push_back(TokenKind::Normal);
  }
  vocab.byteFallback = model.getBoolean("byte_fallback").value_or(false);
  for (size_t i = 0; vocab.byteFallback && i < vocab.pieces.size(); ++i) {
    llvm::StringRef piece = vocab.pieces[i];
    if (piece.size() == 6 && piece.starts_with("<0x") && piece.ends_with(">"))
      vocab.kinds[i] = TokenKind::Byte;
  }
  if (std::optional<int64_t> unk = model.getInteger("unk_id")) {
    if (*unk < 0 || *unk >= static_cast<int64_t>(vocab.pieces.size()))
      return failure(path + ": model.unk_id " + std::to_string(*unk) + " is outside model.vocab");
    vocab.unknown = static_cast<int32_t>(*unk);
    vocab.kinds[*unk] = TokenKind::Unknown;
  }
  const json::Array *added = root.getArray("added_tokens");
  for (size_t i = 0; added && i < added->size(); ++i) {
    std::string where = path + ": added_tokens[" + std::to_string(i) + "]";
    const json::Object *o = (*added)[i].getAsObject();
    std::optional<int64_t> id = o ? o->getInteger("id") : std::nullopt;
    if (!id)
      return failure(where + ": expected an object with an integer \"id\"");
    llvm::Expected<AddedToken> token = parseAddedToken(*o, *id, where);
    if (!token)
      return token.takeError();
    if (*id >= static_cast<int64_t>(vocab.pieces.size()) || vocab.pieces[*id] != token->text)
      return failure(where + ": " + quoted(token->text) + " is not piece " +
                     std::to_string(*id) + " of model.vocab");
    if (vocab.kinds[*id] != TokenKind::Unknown)
      vocab.kinds[*id] = token->special ? TokenKind::Control : TokenKind::UserDefined;
  }
  vocab.added = addedTokensFromKinds(vocab.pieces, vocab.kinds);
  if (llvm::Error e = readUnigramNormalizer(root, path, vocab))
    return std::move(e);
  if (llvm::Error e = readMetaspace(root, path, vocab))
    return std::move(e);
  if (llvm::Error e = readPostProcessor(root.getObject("post_processor"), path, vocab.special))
    return std::move(e);
  return vocab;
}

llvm::Expected<ByteLevelBpeVocabulary> tfm::rt::readVocabAndMerges(const std::string &vocabPath,
                                                                   const std::string &mergesPath) {
  llvm::Expected<json::Value> root = readJson(vocabPath, "vocabulary");
  if (!root)
    return root.takeError();
  TokenTable table(vocabPath);
  if (llvm::Error e = addVocab(*root->getAsObject(), "token", table, vocabPath))
    return std::move(e);
  ByteLevelBpeVocabulary vocab;
  vocab.source = vocabPath + " + " + mergesPath;
  llvm::Expected<std::vector<std::string>> tokens = table.take();
  if (!tokens)
    return tokens.takeError();
  vocab.tokens = std::move(*tokens);

  llvm::Expected<std::string> merges = readText(mergesPath, "merges");
  if (!merges)
    return merges.takeError();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*merges).split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].rtrim('\r');
    if (line.empty() || (i == 0 && line.starts_with("#version")))
      continue;
    if (llvm::Error e = parseMerge(line, mergesPath + ":" + std::to_string(i + 1),
                                   vocab.merges))
      return std::move(e);
  }
  return vocab;
}

llvm::Expected<FileVocabulary> tfm::rt::readTokenizerJson(const std::string &path) {
  llvm::Expected<json::Value> rootValue = readJson(path, "tokenizer");
  if (!rootValue)
    return rootValue.takeError();
  const json::Object &root = *rootValue->getAsObject();
  const json::Object *model = root.getObject("model");
  if (!model)
    return failure(path + ": no \"model\" object: not a Hugging Face tokenizer.json");
  FileVocabulary vocab;
  if (model->getString("type") == "Unigram") {
    auto unigram = readUnigramJson(root, *model, path);
    if (!unigram)
      return unigram.takeError();
    vocab.sentencePiece = std::move(*unigram);
    return vocab;
  }
  if (model->getString("type") == "WordPiece") {
    auto wordPiece = readWordPieceJson(root, *model, path);
    if (!wordPiece)
      return wordPiece.takeError();
    vocab.wordPiece = std::move(*wordPiece);
    return vocab;
  }
  auto bpe = readBpeJson(root, *model, path);
  if (!bpe)
    return bpe.takeError();
  vocab.byteLevel = std::move(*bpe);
  return vocab;
}

llvm::Expected<WordPieceVocabulary> tfm::rt::readWordPieceVocab(const std::string &path) {
  llvm::Expected<std::string> text = readText(path, "vocabulary");
  if (!text)
    return text.takeError();
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(*text).split(lines, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back(); // the newline ending the last line
  if (lines.size() > static_cast<size_t>(INT32_MAX))
    return failure(path + ": " + std::to_string(lines.size()) +
                   " tokens, expected at most 2^31-1 (token ids are int32)");
  static const llvm::StringLiteral kSpecial[] = {"[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"};
  WordPieceVocabulary vocab;
  vocab.source = path;
  for (size_t id = 0; id < lines.size(); ++id) {
    llvm::StringRef token = lines[id].rtrim('\r');
    bool continues = token.starts_with("##");
    vocab.continues.push_back(continues);
    vocab.tokens.push_back(continues ? token.drop_front(2).str() : token.str());
    if (!llvm::is_contained(kSpecial, token))
      continue;
    auto id32 = static_cast<int32_t>(id);
    vocab.added.push_back({id32, token.str(), /*special=*/true});
    if (token == "[CLS]")
      vocab.special.bos = id32;
    else if (token == "[SEP]")
      vocab.special.eos = id32;
    else if (token == "[UNK]")
      vocab.unknown = id32;
  }
  vocab.special.addBos = vocab.special.addEos = true;
  return vocab;
}

llvm::Expected<HfTokenizerSettings> tfm::rt::readHfTokenizerSettings(const std::string &dir) {
  HfTokenizerSettings settings;
  // special_tokens_map.json first, so that tokenizer_config.json overrides it.
  for (const char *name : {"special_tokens_map.json", "tokenizer_config.json"}) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    if (!llvm::sys::fs::exists(path))
      continue;
    llvm::Expected<json::Value> root = readJson(path.str().str(), "tokenizer settings");
    if (!root)
      return root.takeError();
    settings.source += (settings.source.empty() ? "" : " + ") + path.str().str();
    const json::Object &o = *root->getAsObject();
    if (std::optional<std::string> bos = tokenText(o, "bos_token"))
      settings.bosToken = bos;
    if (std::optional<std::string> eos = tokenText(o, "eos_token"))
      settings.eosToken = eos;
    if (std::optional<bool> addBos = o.getBoolean("add_bos_token"))
      settings.addBosToken = addBos;
    if (std::optional<bool> lower = o.getBoolean("do_lower_case"))
      settings.doLowerCase = lower;
    if (std::optional<bool> strip = o.getBoolean("strip_accents"))
      settings.stripAccents = strip;
    if (const json::Object *decoder = o.getObject("added_tokens_decoder")) {
      for (const auto &[key, value] : *decoder) {
        std::string where = path.str().str() + ": added_tokens_decoder[" + quoted(key) + "]";
        int64_t id;
        const json::Object *entry = value.getAsObject();
        if (llvm::StringRef(key).getAsInteger(10, id) || !entry)
          return failure(where + ": expected an integer id mapped to an object");
        if (id < 0 || id > INT32_MAX)
          return failure(where + ": id " + std::to_string(id) + ", expected 0..2^31-1");
        llvm::Expected<AddedToken> token = parseAddedToken(*entry, id, where);
        if (!token)
          return token.takeError();
        settings.addedTokens.push_back(std::move(*token));
      }
    }
  }
  std::sort(settings.addedTokens.begin(), settings.addedTokens.end(),
            [](const AddedToken &a, const AddedToken &b) { return a.id < b.id; });
  return settings;
}
