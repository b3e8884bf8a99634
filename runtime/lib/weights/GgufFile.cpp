//===- GgufFile.cpp - Read a GGUF v3 file in place ------------------------===//
#include "tfm/runtime/GgufFile.h"

#include "tfm/common/BoundedFile.h"

#include "tfm/common/Failure.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace tfm::rt;

namespace {

// Real files nest at most one level (arrays of strings); the limit keeps a
// malicious file from recursing the stack away.
constexpr int kMaxArrayDepth = 8;
// Arrays of arrays are parsed into values of about 100 bytes each, for 12
// bytes of file: no real file has them, so a file cannot make many.
constexpr uint64_t kMaxNestedArrays = 65536;
constexpr int64_t kMaxDims = 4; // GGML_MAX_DIMS
constexpr int64_t kHeaderBytes = 4 + 4 + 8 + 8;

/// Fixed size of a numeric metadata type, 0 for string and array.
int64_t scalarBytes(GgufType type) {
  switch (type) {
  case GgufType::U8: case GgufType::I8: case GgufType::Bool:
    return 1;
  case GgufType::U16: case GgufType::I16:
    return 2;
  case GgufType::U32: case GgufType::I32: case GgufType::F32:
    return 4;
  case GgufType::U64: case GgufType::I64: case GgufType::F64:
    return 8;
  case GgufType::String: case GgufType::Array:
    return 0;
  }
  return 0;
}

bool isIntegerType(GgufType type) {
  return type != GgufType::F32 && type != GgufType::F64 && type != GgufType::Bool &&
         scalarBytes(type) != 0;
}

/// Reads one little-endian scalar of `type` from `p` into a value.
void decodeScalar(GgufType type, const char *p, GgufValue &v) {
  auto load = [&](auto sample) {
    decltype(sample) x;
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (type) {
  case GgufType::U8: v.integer = load(uint8_t()); break;
  case GgufType::I8: v.integer = load(int8_t()); break;
  case GgufType::U16: v.integer = load(uint16_t()); break;
  case GgufType::I16: v.integer = load(int16_t()); break;
  case GgufType::U32: v.integer = load(uint32_t()); break;
  case GgufType::I32: v.integer = load(int32_t()); break;
  // Kept as its bit pattern; getInteger refuses values past INT64_MAX.
  case GgufType::U64: v.integer = static_cast<int64_t>(load(uint64_t())); break;
  case GgufType::I64: v.integer = load(int64_t()); break;
  case GgufType::Bool: v.integer = load(uint8_t()) != 0; break;
  case GgufType::F32: v.real = load(float()); break;
  case GgufType::F64: v.real = load(double()); break;
  case GgufType::String: case GgufType::Array: break;
  }
}

} // namespace

namespace tfm::rt {

/// Walks the file front to back; the first problem becomes the error,
/// naming the file, the entry being read, what was found and what was
/// expected.
class GgufParser {
public:
  GgufParser(GgufFile &file)
      : f(file), bytes(file.buffer->getBuffer()), size(static_cast<int64_t>(bytes.size())) {}

  llvm::Error parse();

private:
  llvm::Error checkTensorsApart();

  llvm::Error fail(const std::string &message) const {
    return failure(f.filePath + ": " + message);
  }

  /// Fails unless `n` more bytes exist at the cursor; `what` names what
  /// is being read and `kind` whether it is metadata or a tensor info.
  llvm::Error need(int64_t n, const std::string &what, const char *kind) const {
    if (n >= 0 && n <= size - pos)
      return llvm::Error::success();
    return fail(what + ": needs " + std::to_string(n) + " bytes at offset " +
                std::to_string(pos) + ", the file has only " + std::to_string(size) +
                " bytes (truncated " + kind + ")");
  }

  template <typename T> T take() {
    T x;
    std::memcpy(&x, bytes.data() + pos, sizeof x);
    pos += sizeof x;
    return x;
  }

  llvm::Error readU32(uint32_t &out, const std::string &what, const char *kind) {
    if (llvm::Error e = need(4, what, kind))
      return e;
    out = take<uint32_t>();
    return llvm::Error::success();
  }

  llvm::Error readU64(uint64_t &out, const std::string &what, const char *kind) {
    if (llvm::Error e = need(8, what, kind))
      return e;
    out = take<uint64_t>();
    return llvm::Error::success();
  }

  llvm::Error readString(llvm::StringRef &out, const std::string &what, const char *kind) {
    uint64_t length;
    if (llvm::Error e = readU64(length, what + " (string length)", kind))
      return e;
    // No separate cap on a string's length: it must fit in the rest of the
    // file, and the string is a view into the mapping, not a copy.
    if (length > static_cast<uint64_t>(size - pos))
      return fail(what + ": a string of " + std::to_string(length) + " bytes at offset " +
                  std::to_string(pos) + ", the file has only " + std::to_string(size) +
                  " bytes (truncated " + kind + ")");
    out = bytes.substr(pos, length);
    pos += static_cast<int64_t>(length);
    return llvm::Error::success();
  }

  llvm::Error readType(GgufType &out, const std::string &what) {
    uint32_t raw;
    if (llvm::Error e = readU32(raw, what + " (value type)", "metadata"))
      return e;
    if (raw > static_cast<uint32_t>(GgufType::F64))
      return fail(what + ": value type " + std::to_string(raw) +
                  ", expected a GGUF value type 0..12");
    out = static_cast<GgufType>(raw);
    return llvm::Error::success();
  }

  llvm::Error readValue(GgufType type, GgufValue &v, const std::string &what, int depth);
  llvm::Error readMetadata(uint64_t count);
  llvm::Error readTensorInfos(uint64_t count);
  llvm::Error readAlignment();

  GgufFile &f;
  llvm::StringRef bytes;
  int64_t size;
  int64_t pos = 0;
};

} // namespace tfm::rt

llvm::Error GgufParser::readValue(GgufType type, GgufValue &v, const std::string &what,
                                  int depth) {
  v.type = type;
  if (type == GgufType::String)
    return readString(v.string, what, "metadata");
  if (type != GgufType::Array) {
    int64_t n = scalarBytes(type);
    if (llvm::Error e = need(n, what + " (" + ggufTypeName(type) + ")", "metadata"))
      return e;
    decodeScalar(type, bytes.data() + pos, v);
    pos += n;
    return llvm::Error::success();
  }

  if (depth >= kMaxArrayDepth)
    return fail(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth) +
                " levels");
  if (llvm::Error e = readType(v.elementType, what + " (array element type)"))
    return e;
  if (llvm::Error e = readU64(v.count, what + " (array length)", "metadata"))
    return e;
  // Every element takes at least one byte (strings and arrays their 8-byte
  // length): a count the rest of the file cannot hold is refused before
  // anything is allocated for it.
  int64_t elementBytes = scalarBytes(v.elementType);
  int64_t minElement = elementBytes ? elementBytes : 8;
  if (v.count > static_cast<uint64_t>((size - pos) / minElement))
    return fail(what + ": an array of " + std::to_string(v.count) + " " +
                ggufTypeName(v.elementType) + " values at offset " + std::to_string(pos) +
                " needs at least " + std::to_string(v.count) + " x " +
                std::to_string(minElement) + " bytes, the file has only " +
                std::to_string(size) + " bytes (truncated metadata)");
  if (elementBytes) {
    v.elements = bytes.substr(pos, v.count * elementBytes);
    pos += static_cast<int64_t>(v.count) * elementBytes;
    return llvm::Error::success();
  }
  if (v.elementType == GgufType::String) {
    // Checked here, kept as the file's bytes: a token list of a million
    // strings costs no memory until it is read.
    int64_t start = pos;
    for (uint64_t i = 0; i < v.count; ++i) {
      llvm::StringRef ignored;
      if (llvm::Error e = readString(ignored, what + "[" + std::to_string(i) + "]", "metadata"))
        return e;
    }
    v.elements = bytes.slice(start, pos);
    return llvm::Error::success();
  }
  if (v.count > kMaxNestedArrays)
    return fail(what + ": an array of " + std::to_string(v.count) + " arrays, expected at most " +
                std::to_string(kMaxNestedArrays));
  v.items.resize(v.count);
  for (uint64_t i = 0; i < v.count; ++i)
    if (llvm::Error e = readValue(v.elementType, v.items[i],
                                  what + "[" + std::to_string(i) + "]", depth + 1))
      return e;
  return llvm::Error::success();
}

llvm::Error GgufParser::readMetadata(uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    std::string entry = "metadata entry #" + std::to_string(i);
    llvm::StringRef key;
    if (llvm::Error e = readString(key, entry + " key", "metadata"))
      return e;
    // Keys and names are the file's bytes: quoted() escapes and cuts them,
    // so that neither a terminal escape nor a key as long as the file ends
    // up in a message (this string is also rebuilt for every array element).
    std::string what = "metadata key " + tfm::quoted(key);
    if (f.metadata.count(key))
      return fail(what + " appears twice, expected each key once");
    GgufType type;
    if (llvm::Error e = readType(type, what))
      return e;
    GgufValue value;
    if (llvm::Error e = readValue(type, value, what, 0))
      return e;
    f.keyOrder.push_back(key.str());
    f.metadata[key] = std::move(value);
  }
  return llvm::Error::success();
}

llvm::Error GgufParser::readAlignment() {
  const GgufValue *v = f.find("general.alignment");
  if (!v)
    return llvm::Error::success();
  if (v->type != GgufType::U32)
    return fail(std::string("metadata key 'general.alignment' is a ") + ggufTypeName(v->type) +
                ", expected a uint32");
  if (v->integer == 0 || !llvm::isPowerOf2_64(v->integer))
    return fail("metadata key 'general.alignment' is " + std::to_string(v->integer) +
                ", expected a power of two");
  f.dataAlignment = static_cast<uint64_t>(v->integer);
  return llvm::Error::success();
}

llvm::Error GgufParser::readTensorInfos(uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    llvm::StringRef name;
    if (llvm::Error e = readString(name, "tensor info #" + std::to_string(i) + " name",
                                   "tensor infos"))
      return e;
    std::string what = "tensor " + tfm::quoted(name);
    if (f.tensorIndex.count(name))
      return fail(what + " appears twice, expected each tensor name once");
    GgufTensorInfo t;
    t.name = name.str();
    uint32_t nDims;
    if (llvm::Error e = readU32(nDims, what + " (n_dims)", "tensor infos"))
      return e;
    if (nDims > kMaxDims)
      return fail(what + ": n_dims " + std::to_string(nDims) + ", expected at most " +
                  std::to_string(kMaxDims));
    int64_t elements = 1;
    for (uint32_t d = 0; d < nDims; ++d) {
      uint64_t ne;
      if (llvm::Error e = readU64(ne, what + " (ne[" + std::to_string(d) + "])",
                                  "tensor infos"))
        return e;
      // Each dimension and the element count stay far below 2^62 bytes.
      if (ne == 0 || ne > (uint64_t(1) << 40) ||
          elements > (int64_t(1) << 40) / static_cast<int64_t>(ne))
        return fail(what + ": dimension ne[" + std::to_string(d) + "] = " +
                    std::to_string(ne) + ", expected a positive size whose element count "
                    "stays below 2^40");
      elements *= static_cast<int64_t>(ne);
      t.ne.push_back(static_cast<int64_t>(ne));
    }
    t.shape.assign(t.ne.rbegin(), t.ne.rend());
    if (llvm::Error e = readU32(t.type, what + " (type)", "tensor infos"))
      return e;
    const GgmlTypeInfo *info = ggmlTypeInfo(t.type);
    if (!info)
      return fail(what + ": ggml type " + std::to_string(t.type) +
                  ", not a type ggml defines");
    int64_t rowLength = t.ne.empty() ? 1 : t.ne[0];
    if (rowLength % info->blockSize != 0)
      return fail(what + ": ne[0] = " + std::to_string(rowLength) + " is not a multiple of " +
                  info->name + "'s block size " + std::to_string(info->blockSize));
    t.bytes = elements / info->blockSize * info->blockBytes;
    uint64_t offset;
    if (llvm::Error e = readU64(offset, what + " (offset)", "tensor infos"))
      return e;
    if (offset > static_cast<uint64_t>(size))
      return fail(what + ": data offset " + std::to_string(offset) + " lies past the end of "
                  "the file (" + std::to_string(size) + " bytes; truncated tensor data)");
    t.offset = static_cast<int64_t>(offset); // made absolute once the data start is known
    f.tensorIndex[name] = f.tensorInfos.size();
    f.tensorInfos.push_back(std::move(t));
  }
  return llvm::Error::success();
}

bool tfm::rt::hasGgufMagic(const std::string &path) {
  llvm::Expected<std::string> head = readFileHead(path, 4, "GGUF file");
  if (!head) {
    llvm::consumeError(head.takeError()); // not a regular file: not a GGUF either
    return false;
  }
  return *head == "GGUF";
}

llvm::Error GgufParser::parse() {
  if (size < 4 || !bytes.starts_with("GGUF"))
    return fail("bad magic \"" + llvm::toHex(bytes.take_front(4), /*LowerCase=*/true) +
                "\" (hex), expected \"GGUF\" (47475546): not a GGUF file");
  if (size < kHeaderBytes)
    return fail(std::to_string(size) + " bytes, too short for the " +
                std::to_string(kHeaderBytes) + "-byte GGUF header (truncated metadata)");
  pos = 4;
  uint32_t version = take<uint32_t>();
  if (version != 3)
    return fail("GGUF version " + std::to_string(version) +
                ", this reader reads version 3 only (re-convert the file with a current "
                "llama.cpp)");
  uint64_t nTensors = take<uint64_t>();
  uint64_t nKv = take<uint64_t>();
  // Counts no file of this size could hold are refused before anything is
  // read for them. The bound is loose on purpose: a file cut short keeps
  // its true counts, and reading it names the entry where it ends.
  const int64_t rest = size - pos;
  if (nKv > static_cast<uint64_t>(rest) || nTensors > static_cast<uint64_t>(rest))
    return fail("header says " + std::to_string(nKv) + " metadata entries and " +
                std::to_string(nTensors) + " tensors, more than the " + std::to_string(rest) +
                " bytes after the header could hold (corrupt header)");

  if (llvm::Error e = readMetadata(nKv))
    return e;
  if (llvm::Error e = readAlignment())
    return e;
  if (llvm::Error e = readTensorInfos(nTensors))
    return e;

  f.dataStart = static_cast<int64_t>(llvm::alignTo(pos, f.dataAlignment));
  for (GgufTensorInfo &t : f.tensorInfos) {
    if (t.offset % static_cast<int64_t>(f.dataAlignment) != 0)
      return fail("tensor " + tfm::quoted(t.name) + ": data offset " + std::to_string(t.offset) +
                  " is not a multiple of the alignment " + std::to_string(f.dataAlignment));
    int64_t begin = f.dataStart + t.offset;
    if (begin > size || t.bytes > size - begin)
      return fail("tensor " + tfm::quoted(t.name) + " (" + ggmlTypeInfo(t.type)->name + ", ne " +
                  "[" + llvm::join(llvm::map_range(t.ne, [](int64_t n) {
                    return std::to_string(n);
                  }), ", ") + "]) needs bytes " + std::to_string(begin) + ".." +
                  std::to_string(begin + t.bytes) + ", the file has only " +
                  std::to_string(size) + " bytes (truncated tensor data)");
    t.offset = begin;
  }
  return checkTensorsApart();
}

/// Two tensors whose bytes overlap would each read the other's data, and
/// one written would change the other: llama.cpp's files never share bytes.
llvm::Error GgufParser::checkTensorsApart() {
  std::vector<const GgufTensorInfo *> byOffset;
  for (const GgufTensorInfo &t : f.tensorInfos)
    if (t.bytes > 0)
      byOffset.push_back(&t);
  llvm::sort(byOffset, [](const GgufTensorInfo *a, const GgufTensorInfo *b) {
    return a->offset < b->offset;
  });
  for (size_t i = 1; i < byOffset.size(); ++i) {
    const GgufTensorInfo &a = *byOffset[i - 1], &b = *byOffset[i];
    if (b.offset < a.offset + a.bytes)
      return fail("tensor " + tfm::quoted(a.name) + " (bytes " + std::to_string(a.offset) + ".." +
                  std::to_string(a.offset + a.bytes) + ") and tensor " + tfm::quoted(b.name) +
                  " (from byte " + std::to_string(b.offset) +
                  ") overlap; expected each tensor's data apart");
  }
  return llvm::Error::success();
}

const char *tfm::rt::ggufTypeName(GgufType type) {
  switch (type) {
  case GgufType::U8: return "uint8";
  case GgufType::I8: return "int8";
  case GgufType::U16: return "uint16";
  case GgufType::I16: return "int16";
  case GgufType::U32: return "uint32";
  case GgufType::I32: return "int32";
  case GgufType::F32: return "float32";
  case GgufType::Bool: return "bool";
  case GgufType::String: return "string";
  case GgufType::Array: return "array";
  case GgufType::U64: return "uint64";
  case GgufType::I64: return "int64";
  case GgufType::F64: return "float64";
  }
  return "?";
}

const GgmlTypeInfo *tfm::rt::ggmlTypeInfo(uint32_t type) {
  // ggml.h's enum ggml_type; ids 4, 5 and 31..33, 36..38 were retired.
  static const GgmlTypeInfo kTypes[] = {
      {"f32", 1, 4},        {"f16", 1, 2},        {"q4_0", 32, 18},   {"q4_1", 32, 20},
      {nullptr, 0, 0},      {nullptr, 0, 0},      {"q5_0", 32, 22},   {"q5_1", 32, 24},
      {"q8_0", 32, 34},     {"q8_1", 32, 36},     {"q2_K", 256, 84},  {"q3_K", 256, 110},
      {"q4_K", 256, 144},   {"q5_K", 256, 176},   {"q6_K", 256, 210}, {"q8_K", 256, 292},
      {"iq2_xxs", 256, 66}, {"iq2_xs", 256, 74},  {"iq3_xxs", 256, 98}, {"iq1_s", 256, 50},
      {"iq4_nl", 32, 18},   {"iq3_s", 256, 110},  {"iq2_s", 256, 82}, {"iq4_xs", 256, 136},
      {"i8", 1, 1},         {"i16", 1, 2},        {"i32", 1, 4},      {"i64", 1, 8},
      {"f64", 1, 8},        {"iq1_m", 256, 56},   {"bf16", 1, 2},     {nullptr, 0, 0},
      {nullptr, 0, 0},      {nullptr, 0, 0},      {"tq1_0", 256, 54}, {"tq2_0", 256, 66},
      {nullptr, 0, 0},      {nullptr, 0, 0},      {nullptr, 0, 0},    {"mxfp4", 32, 17},
  };
  if (type >= std::size(kTypes) || !kTypes[type].name)
    return nullptr;
  return &kTypes[type];
}

uint32_t tfm::rt::ggmlTypeOf(const ElementEncoding &encoding) {
  if (encoding.block)
    return blockLayout(*encoding.block).ggmlType;
  return encoding.plain == DType::F32   ? GgmlF32
         : encoding.plain == DType::F16 ? GgmlF16
                                        : GgmlBF16;
}

std::optional<tfm::ElementEncoding> tfm::rt::encodingOfGgmlType(uint32_t type) {
  using tfm::BlockFormat, tfm::DType, tfm::ElementEncoding;
  for (BlockFormat format : {BlockFormat::Q8_0, BlockFormat::Q4_0, BlockFormat::Q4_K,
                             BlockFormat::Q5_K, BlockFormat::Q6_K})
    if (blockLayout(format).ggmlType == type)
      return ElementEncoding{DType::F32, format};
  for (DType plain : {DType::F32, DType::F16, DType::BF16})
    if (ggmlTypeOf(ElementEncoding{plain, std::nullopt}) == type)
      return ElementEncoding{plain, std::nullopt};
  return std::nullopt;
}

int64_t GgufTensorInfo::elementCount() const {
  int64_t n = 1;
  for (int64_t d : ne)
    n *= d;
  return n;
}

llvm::Expected<std::unique_ptr<GgufFile>> GgufFile::open(const std::string &path,
                                                         WeightMemory memory) {
  auto buffer = readWeightFile(path, memory, "GGUF file");
  if (!buffer)
    return buffer.takeError();
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->filePath = path;
  file->buffer = std::move(*buffer);
  GgufParser parser(*file);
  if (llvm::Error e = parser.parse())
    return std::move(e);
  return file;
}

const GgufValue *GgufFile::find(llvm::StringRef key) const {
  auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

const GgufTensorInfo *GgufFile::findTensor(llvm::StringRef name) const {
  auto it = tensorIndex.find(name);
  return it == tensorIndex.end() ? nullptr : &tensorInfos[it->second];
}

llvm::Expected<std::vector<float>> GgufFile::f32Vector(const GgufTensorInfo &tensor) const {
  if (tensor.type != GgmlF32 || tensor.shape.size() != 1)
    return failure(filePath + ": tensor '" + tensor.name + "' is of type " +
                   std::to_string(tensor.type) + " with " + std::to_string(tensor.shape.size()) +
                   " dimensions; expected a vector of f32");
  std::vector<float> values(static_cast<size_t>(tensor.shape[0]));
  std::memcpy(values.data(), data() + tensor.offset, values.size() * sizeof(float));
  return values;
}

// The accessors' keys are the caller's (constants, or "<arch>.<key>" after
// the architecture has been checked), so they are shown as they are.
llvm::Error GgufFile::wrongType(llvm::StringRef key, const GgufValue &value,
                                const char *expected) const {
  std::string found = ggufTypeName(value.type);
  if (value.type == GgufType::Array)
    found += std::string(" of ") + ggufTypeName(value.elementType);
  return failure(filePath + ": metadata key '" + key.str() + "' is " + found +
                                     ", expected " + expected);
}

llvm::Expected<const GgufValue *> GgufFile::require(llvm::StringRef key,
                                                    const char *expected) const {
  if (const GgufValue *v = find(key))
    return v;
  return failure(filePath + ": metadata key '" + key.str() +
                                     "' is missing, expected " + expected);
}

llvm::Expected<std::string> GgufFile::getString(llvm::StringRef key) const {
  auto v = require(key, "a string");
  if (!v)
    return v.takeError();
  if ((*v)->type != GgufType::String)
    return wrongType(key, **v, "a string");
  return (*v)->string.str();
}

llvm::Expected<int64_t> GgufFile::getInteger(llvm::StringRef key) const {
  auto v = require(key, "an integer");
  if (!v)
    return v.takeError();
  if (!isIntegerType((*v)->type))
    return wrongType(key, **v, "an integer");
  if ((*v)->type == GgufType::U64 && (*v)->integer < 0)
    return failure(filePath + ": metadata key '" + key.str() + "' is " +
                                       std::to_string(static_cast<uint64_t>((*v)->integer)) +
                                       ", expected an integer below 2^63");
  return (*v)->integer;
}

llvm::Expected<double> GgufFile::getFloat(llvm::StringRef key) const {
  auto v = require(key, "a float");
  if (!v)
    return v.takeError();
  if ((*v)->type != GgufType::F32 && (*v)->type != GgufType::F64)
    return wrongType(key, **v, "a float32 or float64");
  return (*v)->real;
}

llvm::Expected<bool> GgufFile::getBool(llvm::StringRef key) const {
  auto v = require(key, "a bool");
  if (!v)
    return v.takeError();
  if ((*v)->type != GgufType::Bool)
    return wrongType(key, **v, "a bool");
  return (*v)->integer != 0;
}

llvm::Expected<std::vector<std::string>>
GgufFile::getStringArray(llvm::StringRef key) const {
  auto v = require(key, "an array of string");
  if (!v)
    return v.takeError();
  if ((*v)->type != GgufType::Array || (*v)->elementType != GgufType::String)
    return wrongType(key, **v, "an array of string");
  // The parser checked every length against the file.
  std::vector<std::string> out;
  out.reserve((*v)->count);
  llvm::StringRef rest = (*v)->elements;
  for (uint64_t i = 0; i < (*v)->count; ++i) {
    uint64_t length;
    std::memcpy(&length, rest.data(), sizeof length);
    out.push_back(rest.substr(sizeof length, length).str());
    rest = rest.drop_front(sizeof length + length);
  }
  return out;
}

llvm::Expected<std::vector<float>> GgufFile::getF32Array(llvm::StringRef key) const {
  auto v = require(key, "an array of float32");
  if (!v)
    return v.takeError();
  if ((*v)->type != GgufType::Array || (*v)->elementType != GgufType::F32)
    return wrongType(key, **v, "an array of float32");
  std::vector<float> out((*v)->count);
  std::memcpy(out.data(), (*v)->elements.data(), (*v)->elements.size());
  return out;
}

llvm::Expected<std::vector<int32_t>> GgufFile::getI32Array(llvm::StringRef key) const {
  auto v = require(key, "an array of integers");
  if (!v)
    return v.takeError();
  if ((*v)->type != GgufType::Array || !isIntegerType((*v)->elementType))
    return wrongType(key, **v, "an array of integers");
  int64_t width = scalarBytes((*v)->elementType);
  std::vector<int32_t> out((*v)->count);
  for (uint64_t i = 0; i < (*v)->count; ++i) {
    GgufValue item;
    decodeScalar((*v)->elementType, (*v)->elements.data() + i * width, item);
    bool fits = item.integer >= std::numeric_limits<int32_t>::min() &&
                item.integer <= std::numeric_limits<int32_t>::max() &&
                !((*v)->elementType == GgufType::U64 && item.integer < 0);
    if (!fits)
      return failure(filePath + ": metadata key '" + key.str() + "'[" + std::to_string(i) + "] is " +
              ((*v)->elementType == GgufType::U64
                   ? std::to_string(static_cast<uint64_t>(item.integer))
                   : std::to_string(item.integer)) +
              ", expected a value that fits in int32");
    out[i] = static_cast<int32_t>(item.integer);
  }
  return out;
}
