//===- SentencePieceModelFile.cpp - Read SentencePiece's tokenizer.model --===//
//
// tokenizer.model is a protobuf ModelProto (sentencepiece_model.proto),
// read here with a minimal wire-format reader: only the fields below are
// looked at, every other field is skipped by its wire type.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/TokenizerFiles.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

using namespace tfm::rt;

using tfm::failure;

namespace {

// Field numbers of sentencepiece_model.proto.
enum ModelProtoField { kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3 };
enum PieceField { kPiece = 1, kScore = 2, kType = 3 };
enum TrainerField {
  kModelType = 3,
  kTreatWhitespaceAsSuffix = 24,
  kByteFallback = 35,
  kUnkId = 40,
  kBosId = 41,
  kEosId = 42,
};
enum NormalizerField {
  kName = 1,
  kPrecompiledCharsmap = 2,
  kAddDummyPrefix = 3,
  kRemoveExtraWhitespaces = 4,
  kEscapeWhitespaces = 5,
};
enum ModelType { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

/// One field of a protobuf message.
struct Field {
  uint32_t number = 0;
  WireType wire = kVarint;
  uint64_t varint = 0;   // kVarint
  llvm::StringRef bytes; // kLengthDelimited, and the raw 4/8 bytes of fixed fields
};

/// Walks the fields of one message; `what` names it in errors.
class MessageReader {
public:
  MessageReader(llvm::StringRef data, std::string what)
      : data(data), what(std::move(what)) {}

  /// The next field, or std::nullopt at the end of the message.
  llvm::Expected<std::optional<Field>> next() {
    if (at == data.size())
      return std::nullopt;
    size_t start = at;
    uint64_t key;
    if (!readVarint(key))
      return malformed(start, "a field key");
    Field field;
    field.number = static_cast<uint32_t>(key >> 3);
    field.wire = static_cast<WireType>(key & 7);
    switch (field.wire) {
    case kVarint:
      if (!readVarint(field.varint))
        return malformed(start, "a varint value");
      break;
    case kFixed64:
    case kFixed32: {
      size_t size = field.wire == kFixed64 ? 8 : 4;
      if (data.size() - at < size)
        return malformed(start, "a fixed-size value");
      field.bytes = data.substr(at, size);
      at += size;
      break;
    }
    case kLengthDelimited: {
      uint64_t size;
      if (!readVarint(size) || data.size() - at < size)
        return malformed(start, "a length-delimited value");
      field.bytes = data.substr(at, size);
      at += size;
      break;
    }
    default:
      return failure(what + ": field " + std::to_string(field.number) + " at byte " +
                     std::to_string(start) + " has wire type " +
                     std::to_string(key & 7) + ", expected 0, 1, 2 or 5 (not a "
                     "SentencePiece model?)");
    }
    return field;
  }

private:
  bool readVarint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64 && at < data.size(); shift += 7) {
      auto byte = static_cast<uint8_t>(data[at++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  llvm::Error malformed(size_t offset, const char *expected) const {
    return failure(what + ": truncated or malformed protobuf at byte " +
                   std::to_string(offset) + ": expected " + expected);
  }

  llvm::StringRef data;
  std::string what;
  size_t at = 0;
};

/// Checks that `field` has the wire type its declared type implies.
llvm::Error expectWire(const Field &field, WireType wire, const std::string &name,
                       const std::string &path) {
  if (field.wire == wire)
    return llvm::Error::success();
  return failure(path + ": " + name + " has protobuf wire type " +
                 std::to_string(field.wire) + ", expected " + std::to_string(wire));
}

/// An int32 field: negative values are sign-extended to ten varint bytes.
int32_t asInt32(const Field &field) { return static_cast<int32_t>(field.varint); }

/// Walks the fields of a message, handing each to `take`.
template <typename Take>
llvm::Error readFields(llvm::StringRef bytes, const std::string &what, Take take) {
  MessageReader reader(bytes, what);
  for (;;) {
    auto field = reader.next();
    if (!field)
      return field.takeError();
    if (!*field)
      return llvm::Error::success();
    if (llvm::Error e = take(**field))
      return e;
  }
}

llvm::Error readPiece(llvm::StringRef bytes, const std::string &path,
                      SentencePieceVocabulary &vocab) {
  std::string name = "pieces[" + std::to_string(vocab.pieces.size()) + "]";
  std::string piece;
  float score = 0.0f;
  int32_t type = static_cast<int32_t>(TokenKind::Normal); // the proto default
  auto take = [&](const Field &f) -> llvm::Error {
    switch (f.number) {
    case kPiece:
      if (llvm::Error e = expectWire(f, kLengthDelimited, name + ".piece", path))
        return e;
      piece = f.bytes.str();
      break;
    case kScore:
      if (llvm::Error e = expectWire(f, kFixed32, name + ".score", path))
        return e;
      std::memcpy(&score, f.bytes.data(), sizeof score);
      break;
    case kType:
      if (llvm::Error e = expectWire(f, kVarint, name + ".type", path))
        return e;
      type = asInt32(f);
      break;
    default:
      break;
    }
    return llvm::Error::success();
  };
  if (llvm::Error e = readFields(bytes, path + ": " + name, take))
    return e;
  if (type < static_cast<int32_t>(TokenKind::Normal) ||
      type > static_cast<int32_t>(TokenKind::Byte))
    return failure(path + ": " + name + " " + tfm::quoted(piece) + " has type " +
                   std::to_string(type) +
                   ", expected 1..6 (NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE)");
  vocab.pieces.push_back(std::move(piece));
  vocab.scores.push_back(score);
  vocab.kinds.push_back(static_cast<TokenKind>(type));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<SentencePieceVocabulary> tfm::rt::readSentencePieceModel(const std::string &path) {
  auto file = readBoundedFile(path, kMaxTokenizerFileBytes, "SentencePiece model");
  if (!file)
    return file.takeError();

  SentencePieceVocabulary vocab;
  vocab.source = path;
  // Defaults of sentencepiece_model.proto for fields the file leaves out.
  int32_t modelType = kUnigram;
  bool whitespaceAsSuffix = false;
  vocab.byteFallback = false;
  vocab.unknown = 0;
  // The file does not say whether a prompt starts with BOS; Llama and
  // Hugging Face's LlamaTokenizer do (tokenizer_config.json may override).
  vocab.special = {/*bos=*/1, /*eos=*/2, /*addBos=*/true};
  vocab.addDummyPrefix = true;
  vocab.removeExtraWhitespaces = true;
  vocab.escapeWhitespaces = true;
  std::string normalizerName;

  auto trainerField = [&](const Field &t) -> llvm::Error {
    if (t.wire != kVarint)
      return llvm::Error::success(); // strings and floats we do not need
    switch (t.number) {
    case kModelType: modelType = asInt32(t); break;
    case kTreatWhitespaceAsSuffix: whitespaceAsSuffix = t.varint != 0; break;
    case kByteFallback: vocab.byteFallback = t.varint != 0; break;
    case kUnkId: vocab.unknown = asInt32(t); break;
    case kBosId: vocab.special.bos = asInt32(t); break;
    case kEosId: vocab.special.eos = asInt32(t); break;
    default: break;
    }
    return llvm::Error::success();
  };
  auto normalizerField = [&](const Field &n) -> llvm::Error {
    switch (n.number) {
    case kName: normalizerName = n.bytes.str(); break;
    case kPrecompiledCharsmap: vocab.precompiledCharsmap = n.bytes.str(); break;
    case kAddDummyPrefix: vocab.addDummyPrefix = n.varint != 0; break;
    case kRemoveExtraWhitespaces: vocab.removeExtraWhitespaces = n.varint != 0; break;
    case kEscapeWhitespaces: vocab.escapeWhitespaces = n.varint != 0; break;
    default: break;
    }
    return llvm::Error::success();
  };
  auto modelField = [&](const Field &f) -> llvm::Error {
    const char *name = f.number == kPieces        ? "pieces"
                       : f.number == kTrainerSpec ? "trainer_spec"
                                                  : "normalizer_spec";
    if (f.number != kPieces && f.number != kTrainerSpec && f.number != kNormalizerSpec)
      return llvm::Error::success();
    if (llvm::Error e = expectWire(f, kLengthDelimited, name, path))
      return e;
    if (f.number == kPieces)
      return readPiece(f.bytes, path, vocab);
    if (f.number == kTrainerSpec)
      return readFields(f.bytes, path + ": trainer_spec", trainerField);
    return readFields(f.bytes, path + ": normalizer_spec", normalizerField);
  };
  if (llvm::Error e = readFields((*file)->getBuffer(), path, modelField))
    return std::move(e);

  if (vocab.pieces.empty())
    return failure(path + ": no pieces: not a SentencePiece model");
  vocab.added = addedTokensFromKinds(vocab.pieces, vocab.kinds);
  if (modelType != kBpe && modelType != kUnigram)
    return failure(path + ": trainer_spec.model_type is " + std::to_string(modelType) +
                   "; supported: UNIGRAM (1, T5's) and BPE (2, Llama's)");
  vocab.model = modelType == kUnigram ? SentencePieceModel::Unigram : SentencePieceModel::Bpe;
  if (whitespaceAsSuffix)
    return failure(path + ": trainer_spec.treat_whitespace_as_suffix is set; only the "
                          "whitespace-as-prefix convention is supported");
  if (vocab.model == SentencePieceModel::Bpe && !vocab.precompiledCharsmap.empty())
    return failure(path + ": normalizer_spec " + tfm::quoted(normalizerName) +
                   " has a precompiled_charsmap; a BPE model's normalizer must be the identity");
  return vocab;
}
