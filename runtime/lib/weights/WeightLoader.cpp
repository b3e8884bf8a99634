//===- WeightLoader.cpp - Bind any weight file to a manifest --------------===//
#include "tfm/runtime/WeightLoader.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Hash.h"

#include "tfm/runtime/GgufFile.h"
#include "tfm/common/HalfFloat.h"
#include "tfm/common/TensorNames.h"
#include "tfm/runtime/Llama2cCheckpoint.h"
#include "tfm/runtime/Progress.h"
#include "tfm/runtime/SafetensorsFile.h"
#include "tfm/common/UntrustedText.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

using namespace tfm;
using namespace tfm::rt;

namespace {

/// Where one manifest tensor's data lies in a file, before any checks.
struct FoundTensor {
  std::string file;
  std::string name;  // as the file names it
  std::string dtype; // as the file spells it, for messages
  std::optional<ElementEncoding> encoding; // none: a type tfm does not read
  std::vector<int64_t> shape; // as stored, row-major
  const uint8_t *data = nullptr;
  HfLayout layout = HfLayout::Same;
  float addend = 0.0f; // added to every value (storedMinusRead's opposite)
};

/// Finds the tensor standing for a manifest tensor, or says why not.
using TensorFinder = std::function<llvm::Expected<FoundTensor>(const TensorSpec &)>;

/// Encodes `n` values as the plain type `encoding`.
void encodeValues(const float *values, int64_t n, const ElementEncoding &encoding, uint8_t *out) {
  if (encoding.plain == DType::F32) {
    std::memcpy(out, values, n * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = encoding.plain == DType::F16 ? toHalf(values[i]) : toBfloat16(values[i]);
    std::memcpy(out + 2 * i, &h, sizeof h);
  }
}

/// One row of `n` values from `from` (stored as `stored`) to `out` as `target`.
void convertRow(const uint8_t *from, const ElementEncoding &stored, int64_t n,
                const ElementEncoding &target, uint8_t *out) {
  if (stored == target) {
    std::memcpy(out, from, stored.bytes(n));
    return;
  }
  std::vector<float> values(n);
  decodeElements(stored, from, n, values.data());
  encodeValues(values.data(), n, target, out);
}

/// Writes the manifest layout of `t` into `out` (spec.byteCount() bytes),
/// in the manifest's encoding. checkTensor has ruled out what cannot be
/// converted: a block format other than the stored one, a transposed block
/// format.
void rearrange(const FoundTensor &t, const TensorSpec &spec, const ModelSpec &model,
               uint8_t *out) {
  const ElementEncoding &stored = *t.encoding, &target = spec.dtype;
  // A permuted vector (the bias of a permuted projection) moves element by
  // element: a row each.
  const bool permuted = t.layout == HfLayout::RopePermuted || t.layout == HfLayout::QkvGrouped;
  const int64_t rows = spec.shape.size() == 2 || permuted ? spec.shape[0] : 1;
  const int64_t rowLength = spec.shape.size() == 2 ? spec.shape.back() : (permuted ? 1 : spec.shape[0]);
  const int64_t storedRow = stored.bytes(rowLength), targetRow = target.bytes(rowLength);
  switch (t.layout) {
  case HfLayout::Same:
  case HfLayout::RowVector: // a [1, N] matrix holds the vector's bytes
    for (int64_t r = 0; r < rows; ++r)
      convertRow(t.data + r * storedRow, stored, rowLength, target, out + r * targetRow);
    if (t.addend != 0.0f) { // a norm's gain stored other than the kernels read it
      std::vector<float> values(rows * rowLength);
      decodeElements(target, out, rows * rowLength, values.data());
      for (float &v : values)
        v += t.addend;
      encodeValues(values.data(), rows * rowLength, target, out);
    }
    return;
  case HfLayout::Transposed: {
    // Stored [in, out]; the manifest wants [out, in]. Each stored row
    // lands in a column: decoded a row at a time, written back in tiles.
    const int64_t in = t.shape[0], outDim = t.shape[1];
    std::vector<float> transposed(in * outDim), row(outDim);
    for (int64_t r = 0; r < in; ++r) {
      decodeElements(stored, t.data + r * stored.bytes(outDim), outDim, row.data());
      for (int64_t c = 0; c < outDim; ++c)
        transposed[c * in + r] = row[c];
    }
    for (int64_t r = 0; r < outDim; ++r)
      encodeValues(transposed.data() + r * in, in, target, out + r * targetRow);
    return;
  }
  case HfLayout::RopePermuted:
  case HfLayout::QkvGrouped:
    for (int64_t r = 0; r < rows; ++r)
      convertRow(t.data + hfRow(t.layout, r, model) * storedRow, stored, rowLength, target,
                 out + r * targetRow);
    return;
  }
}

/// "'h.0.attn.c_attn.weight' (blk.0.attn_qkv.weight)", or just the name
/// when the file uses the manifest's.
std::string label(const FoundTensor &found, const TensorSpec &spec) {
  if (found.name == spec.name)
    return "'" + spec.name + "'";
  return "'" + found.name + "' (" + spec.name + ")";
}

llvm::Error checkTensor(const FoundTensor &found, const TensorSpec &spec) {
  std::vector<int64_t> expected = spec.shape;
  if (found.layout == HfLayout::Transposed)
    std::reverse(expected.begin(), expected.end());
  if (found.layout == HfLayout::RowVector)
    expected.insert(expected.begin(), 1);
  if (found.shape != expected)
    return failure(found.file + ": tensor " + label(found, spec) + " has shape " +
                   formatShape(found.shape) + ", the compiled model expects " +
                   formatShape(expected) +
                   (found.layout == HfLayout::Transposed
                        ? " (Conv1D weights are stored [in, out]: the transpose of " +
                              formatShape(spec.shape) + ")"
                        : ""));
  const std::string compiledFor =
      "; this library was compiled to read it as " + spec.dtype.name();
  if (!found.encoding)
    return failure(found.file + ": tensor " + label(found, spec) + " is " + found.dtype +
                   compiledFor + ", and tfm reads f32, f16, bf16, q8_0, q4_0, q4_K, q5_K "
                   "and q6_K");
  const ElementEncoding &stored = *found.encoding;
  if (spec.dtype.block && stored != spec.dtype)
    return failure(found.file + ": tensor " + label(found, spec) + " is " + stored.name() +
                   compiledFor + " in place (nothing is quantized at load); compile for "
                   "this file's types (tfmc --weights-like " + found.file + ")");
  if (stored.block && found.layout == HfLayout::Transposed)
    return failure(found.file + ": tensor " + label(found, spec) + " is " + stored.name() +
                   " but stored transposed ([in, out]); block formats run along rows, so "
                   "this layout cannot hold it");
  return llvm::Error::success();
}

/// A GGUF's RoPE factor tensors (rope_freqs.weight, LongRoPE's
/// rope_factors_short/long.weight) are no tensors the kernels read: the
/// compiled RoPE tables hold them. A file's must be the compiled ones, and a
/// file without one means none.
llvm::Error checkRopeFactors(const GgufFile &file, const tfm::ModelSpec &config) {
  for (const tfm::RopeFactorTensor &t : tfm::ropeFactorTensors()) {
    const GgufTensorInfo *info = file.findTensor(t.name);
    std::vector<float> stored;
    if (info) {
      llvm::Expected<std::vector<float>> values = file.f32Vector(*info);
      if (!values)
        return values.takeError();
      stored = std::move(*values);
    }
    const std::vector<double> &factors = config.*t.factors;
    std::vector<float> compiled(factors.begin(), factors.end());
    if (stored == compiled && (info != nullptr) == !compiled.empty())
      continue;
    if (!info)
      return failure(file.path() + ": tensor '" + t.name + "' is missing; the library was "
                     "compiled with " + t.what + ", which llama.cpp reads from this tensor");
    return failure(file.path() + ": tensor '" + t.name + "', " + t.what + ", " +
                   (compiled.empty() ? std::string("is present, but the library was compiled "
                                                   "without them")
                                     : std::string("differs from those the library was "
                                                   "compiled with")) +
                   "; compile from this file (tfmc " + file.path() + ")");
  }
  return llvm::Error::success();
}

llvm::Expected<TensorFinder> ggufFinder(const std::string &path, WeightMemory memory,
                                        const tfm::ModelSpec &config, BoundWeights &bound) {
  auto opened = GgufFile::open(path, memory);
  if (!opened)
    return opened.takeError();
  if (llvm::Error e = checkRopeFactors(**opened, config))
    return std::move(e);
  std::shared_ptr<GgufFile> file(std::move(*opened));
  bound.storage.push_back(file);
  return TensorFinder([file](const TensorSpec &spec) -> llvm::Expected<FoundTensor> {
    const GgufTensorInfo *info = file->findTensor(spec.name);
    if (!info)
      return failure(file->path() + ": tensor '" + spec.name +
                     "' is missing (the compiled model needs it; GGUF files name tensors "
                     "as llama.cpp does)");
    FoundTensor t;
    t.file = file->path();
    t.name = info->name;
    t.dtype = ggmlTypeInfo(info->type)->name;
    t.encoding = encodingOfGgmlType(info->type);
    t.shape = info->shape;
    t.data = file->data() + info->offset;
    return t;
  });
}

std::optional<ElementEncoding> safetensorsType(llvm::StringRef dtype) {
  for (DType plain : {DType::F32, DType::F16, DType::BF16})
    if (dtype.equals_insensitive(dtypeName(plain)))
      return ElementEncoding{plain, std::nullopt};
  return std::nullopt;
}

FoundTensor foundIn(const SafetensorsFile &file, const SafetensorsTensor &t, HfLayout layout) {
  FoundTensor found;
  found.file = file.path();
  found.name = t.name;
  found.dtype = t.dtype;
  found.encoding = safetensorsType(t.dtype);
  found.shape = t.shape;
  found.data = file.data() + t.offset;
  found.layout = layout;
  return found;
}

std::string searched(const HfTensorName &hf) {
  std::string s = "'" + hf.names.front() + "' (its Hugging Face name)";
  for (size_t i = 1; i < hf.names.size(); ++i)
    s += " or '" + hf.names[i] + "'";
  return s;
}

llvm::Expected<TensorFinder> safetensorsFinder(const std::string &path, WeightMemory memory,
                                               const tfm::ModelSpec &config,
                                               BoundWeights &bound) {
  auto opened = SafetensorsFile::open(path, memory);
  if (!opened)
    return opened.takeError();
  std::shared_ptr<SafetensorsFile> file(std::move(*opened));
  bound.storage.push_back(file);
  return TensorFinder([file, config](const TensorSpec &spec) -> llvm::Expected<FoundTensor> {
    auto hf = hfTensorName(config, spec.name);
    if (!hf)
      return failure(file->path() + ": " + llvm::toString(hf.takeError()));
    for (const std::string &name : hf->names)
      if (const SafetensorsTensor *t = file->findTensor(name))
        return foundIn(*file, *t, hf->layout);
    return failure(file->path() + ": tensor '" + spec.name + "' is missing: no " +
                   searched(*hf) + " in this file");
  });
}

llvm::Expected<TensorFinder> shardedFinder(const std::string &path, WeightMemory memory,
                                           const tfm::ModelSpec &config,
                                           BoundWeights &bound) {
  auto index = readSafetensorsIndex(path);
  if (!index)
    return index.takeError();
  // Every shard is opened (and so checked) up front, whether or not the
  // manifest needs a tensor from it.
  auto shards = std::make_shared<std::map<std::string, std::shared_ptr<SafetensorsFile>>>();
  for (const std::string &shardPath : index->shards) {
    auto opened = SafetensorsFile::open(shardPath, memory);
    if (!opened)
      return failure(llvm::toString(opened.takeError()) + " (a shard named by " + path + ")");
    std::shared_ptr<SafetensorsFile> shard(std::move(*opened));
    bound.storage.push_back(shard);
    (*shards)[shardPath] = shard;
  }
  auto shared = std::make_shared<SafetensorsIndex>(std::move(*index));
  return TensorFinder([shared, shards, config](const TensorSpec &spec)
                          -> llvm::Expected<FoundTensor> {
    auto hf = hfTensorName(config, spec.name);
    if (!hf)
      return failure(shared->path + ": " + llvm::toString(hf.takeError()));
    for (const std::string &name : hf->names) {
      auto where = shared->shardOf.find(name);
      if (where == shared->shardOf.end())
        continue;
      const SafetensorsFile &shard = *shards->at(where->second);
      if (const SafetensorsTensor *t = shard.findTensor(name))
        return foundIn(shard, *t, hf->layout);
      return failure(shard.path() + ": tensor '" + name + "' is missing, but " +
                     shared->path + " puts it in this shard");
    }
    return failure(shared->path + ": tensor '" + spec.name + "' is missing: no " +
                   searched(*hf) + " in its weight_map");
  });
}

/// The finder of a GGUF, safetensors or index file; `bound` keeps it open.
llvm::Expected<TensorFinder> tensorFinder(const std::string &path, WeightFormat format,
                                          WeightMemory memory, const tfm::ModelSpec &config,
                                          BoundWeights &bound) {
  return format == WeightFormat::Gguf          ? ggufFinder(path, memory, config, bound)
         : format == WeightFormat::Safetensors ? safetensorsFinder(path, memory, config, bound)
                                               : shardedFinder(path, memory, config, bound);
}

/// The generated code reads elements with their natural alignment
/// (blocks: bytes); safetensors and GGUF data offsets promise no more.
bool usableInPlace(const FoundTensor &t, const TensorSpec &spec) {
  int64_t alignment = spec.dtype.block ? 1 : dtypeBytes(spec.dtype.plain);
  bool sameBytes = t.layout == HfLayout::Same || t.layout == HfLayout::RowVector;
  return t.encoding == spec.dtype && sameBytes && t.addend == 0.0f &&
         reinterpret_cast<uintptr_t>(t.data) % alignment == 0;
}

/// Memory for one converted tensor, 64-byte aligned.
llvm::Expected<std::shared_ptr<uint8_t>> allocateTensor(int64_t bytes, const std::string &name) {
  size_t size = llvm::alignTo(static_cast<uint64_t>(bytes), 64);
  void *p = std::aligned_alloc(64, size);
  if (!p)
    return failure("cannot allocate " + std::to_string(size) + " bytes to convert tensor '" +
                   name + "'");
  return std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), std::free);
}

} // namespace

llvm::Expected<WeightFormat> tfm::rt::detectWeightFormat(const std::string &path) {
  if (llvm::sys::fs::is_directory(path))
    return failure(path + ": is a folder, expected a weight file (.gguf, .safetensors, "
                          "model.safetensors.index.json or a llama2.c .bin)");
  llvm::Expected<std::string> head = readFileHead(path, 28, "weight file");
  if (!head)
    return head.takeError();
  llvm::StringRef bytes(*head);
  auto byte = [&](size_t i) { return i < bytes.size() ? static_cast<uint8_t>(bytes[i]) : 0; };

  // A bare pickle opens with PROTO (0x80), the protocol (2..5), then an
  // opcode, never 0; a llama2.c header opening with dim = 0x..80 has a zero
  // third byte for any dim below 2^16.
  bool pickle = byte(0) == 0x80 && byte(1) >= 2 && byte(1) <= 5 && byte(2) != 0;
  if (bytes.starts_with("PK\x03\x04") || pickle)
    return failure(path + " is a PyTorch pickle" +
                   std::string(pickle ? "" : " (a zip archive, as torch.save writes)") +
                   "; tfm does not read pickles (they can run code). Convert it to "
                   "safetensors (e.g. `python -c 'from transformers import "
                   "AutoModelForCausalLM; AutoModelForCausalLM.from_pretrained(DIR)."
                   "save_pretrained(OUT, safe_serialization=True)'`)");
  if (bytes.starts_with("GGUF"))
    return WeightFormat::Gguf;
  // A little-endian header length below 2^32, then the JSON header.
  if (bytes.size() > 8 && bytes[8] == '{' && !byte(4) && !byte(5) && !byte(6) && !byte(7))
    return WeightFormat::Safetensors;
  if (bytes.ltrim().starts_with("{"))
    return WeightFormat::SafetensorsIndex;
  // dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size (negative
  // when untied), seq_len: each well below 2^24 in any real model. A header
  // whose dim and most other fields are like that is a llama2.c checkpoint
  // even when one or two are off (vocab_size = INT32_MIN, a zero): the
  // checkpoint reader names the field, which says more than "bad magic".
  // (dim must be plausible: where other formats have their magic, four
  // printable bytes read as an int32 are at least 2^29.)
  int32_t header[7] = {};
  std::memcpy(header, bytes.data(), std::min(sizeof header, bytes.size()));
  auto plausible = [&](int i) {
    int64_t field = i == 5 ? std::abs(int64_t(header[i])) : header[i];
    return field > 0 && field < (1 << 24);
  };
  int plausibleFields = 0;
  for (int i = 0; i < 7; ++i)
    plausibleFields += plausible(i);
  if (bytes.size() == sizeof header && plausible(0) && plausibleFields >= 5)
    return WeightFormat::Llama2c;
  llvm::StringRef magic = bytes.take_front(4);
  bool printable = llvm::all_of(magic, [](char c) { return llvm::isPrint(c); });
  return failure(path + ": not a weight file tfm reads: bad magic " +
                 (printable ? quoted(magic) + " " : std::string()) + "(hex " +
                 llvm::toHex(magic, /*LowerCase=*/true) +
                 "); expected a GGUF file (magic \"GGUF\"), safetensors (an 8-byte header "
                 "length, then '{'), a model.safetensors.index.json, or a llama2.c "
                 "checkpoint (a header of 7 positive int32)");
}

/// The open files, and each manifest tensor's place in them (none for a
/// llama2.c checkpoint, bound in place as a whole).
struct tfm::rt::WeightTensors::State {
  Manifest manifest;
  BoundWeights files;
  std::vector<FoundTensor> found;
};

llvm::Expected<WeightTensors> tfm::rt::openWeightTensors(const std::string &path,
                                                         const Manifest &manifest,
                                                         const LoadOptions &options) {
  llvm::Expected<WeightFormat> format = detectWeightFormat(path);
  if (!format)
    return format.takeError();
  auto state = std::make_shared<WeightTensors::State>();
  state->manifest = manifest;
  if (*format == WeightFormat::Llama2c) {
    llvm::Expected<BoundWeights> bound = bindLlama2cCheckpoint(path, manifest, options.memory);
    if (!bound)
      return bound.takeError();
    state->files = std::move(*bound);
    return WeightTensors(std::move(state));
  }
  llvm::Expected<TensorFinder> finder =
      tensorFinder(path, *format, options.memory, manifest.config, state->files);
  if (!finder)
    return finder.takeError();
  // Everything is checked before anything is converted.
  for (const TensorSpec &spec : manifest.tensors) {
    llvm::Expected<FoundTensor> t = (*finder)(spec);
    if (!t)
      return t.takeError();
    if (llvm::Error e = checkTensor(*t, spec))
      return std::move(e);
    t->addend = static_cast<float>(
        -storedMinusRead(manifest.config, spec.name, *format == WeightFormat::Gguf));
    state->found.push_back(std::move(*t));
  }
  return WeightTensors(std::move(state));
}

bool tfm::rt::WeightTensors::converts(size_t index) const {
  return !state_->found.empty() &&
         !usableInPlace(state_->found[index], state_->manifest.tensors[index]);
}

llvm::Expected<std::shared_ptr<const void>> tfm::rt::WeightTensors::tensor(size_t index) const {
  // In place: a pointer sharing ownership of the open files.
  if (state_->found.empty())
    return std::shared_ptr<const void>(state_, state_->files.pointers[index]);
  const FoundTensor &t = state_->found[index];
  const TensorSpec &spec = state_->manifest.tensors[index];
  if (!converts(index))
    return std::shared_ptr<const void>(state_, t.data);
  auto copy = allocateTensor(spec.byteCount(), spec.name);
  if (!copy)
    return copy.takeError();
  rearrange(t, spec, state_->manifest.config, copy->get());
  return std::shared_ptr<const void>(std::move(*copy));
}

llvm::Expected<BoundWeights> tfm::rt::bindWeights(const std::string &path,
                                                  const Manifest &manifest,
                                                  const LoadOptions &options) {
  llvm::Expected<WeightTensors> tensors = openWeightTensors(path, manifest, options);
  if (!tensors)
    return tensors.takeError();
  uint64_t convertBytes = 0;
  for (size_t i = 0; i < manifest.tensors.size(); ++i)
    if (tensors->converts(i))
      convertBytes += manifest.tensors[i].byteCount();
  Progress progress("converting weights", options.showProgress ? convertBytes : 0);
  BoundWeights bound;
  bound.storage.push_back(tensors->files());
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    llvm::Expected<std::shared_ptr<const void>> t = tensors->tensor(i);
    if (!t)
      return t.takeError();
    bound.pointers.push_back(t->get());
    if (tensors->converts(i)) {
      bound.storage.push_back(std::move(*t));
      progress.advance(manifest.tensors[i].byteCount());
    }
  }
  return bound;
}

llvm::Expected<WeightTypes> tfm::rt::weightFileTypes(const std::string &path,
                                                     const tfm::ModelSpec &spec) {
  llvm::Expected<WeightFormat> format = detectWeightFormat(path);
  if (!format)
    return format.takeError();
  WeightTypes types;
  if (*format == WeightFormat::Llama2c) // f32 throughout
    return types;
  BoundWeights open;
  llvm::Expected<TensorFinder> finder =
      tensorFinder(path, *format, WeightMemory::Mapped, spec, open);
  if (!finder)
    return finder.takeError();
  for (const ModelTensor &tensor : modelTensors(spec)) {
    TensorSpec wanted{tensor.name, tensor.shape, ElementEncoding{}};
    llvm::Expected<FoundTensor> t = (*finder)(wanted);
    if (!t)
      return t.takeError();
    wanted.dtype = t->encoding.value_or(ElementEncoding{});
    if (llvm::Error e = checkTensor(*t, wanted))
      return std::move(e);
    if (wanted.dtype != ElementEncoding{})
      types[tensor.name] = wanted.dtype;
  }
  return types;
}

llvm::Expected<std::string> tfm::rt::weightFileIdentity(const std::string &path) {
  llvm::Expected<WeightFormat> format = detectWeightFormat(path);
  if (!format)
    return format.takeError();
  llvm::Expected<RegularFile> file = openRegularFile(path, "weight file");
  if (!file)
    return file.takeError();
  uint64_t described = 28; // a llama2.c header: seven int32
  switch (*format) {
  case WeightFormat::Gguf: {
    auto gguf = GgufFile::open(path);
    if (!gguf)
      return gguf.takeError();
    described = static_cast<uint64_t>((*gguf)->dataOffset());
    break;
  }
  case WeightFormat::Safetensors: {
    llvm::Expected<std::string> length = readFileHead(path, 8, "safetensors file");
    if (!length)
      return length.takeError();
    uint64_t headerBytes = 0;
    std::memcpy(&headerBytes, length->data(), std::min<size_t>(8, length->size()));
    described = 8 + std::min<uint64_t>(headerBytes, file->size()); // bounded below
    break;
  }
  case WeightFormat::SafetensorsIndex:
    described = file->size();
    break;
  case WeightFormat::Llama2c:
    break;
  }
  // The parsers refuse descriptions past 100 MB: no identity needs more.
  constexpr uint64_t kMaxDescribedBytes = 128ull << 20;
  llvm::Expected<std::string> head = readFileHead(
      path, static_cast<size_t>(std::min({described, file->size(), kMaxDescribedBytes})),
      "weight file");
  if (!head)
    return head.takeError();
  return contentHash(std::to_string(file->size()) + "\n" + *head);
}

std::vector<std::string> tfm::rt::weightFilesOf(const std::string &path) {
  std::vector<std::string> files{path};
  llvm::Expected<WeightFormat> format = detectWeightFormat(path);
  if (!format) {
    llvm::consumeError(format.takeError());
    return files;
  }
  if (*format != WeightFormat::SafetensorsIndex)
    return files;
  llvm::Expected<SafetensorsIndex> index = readSafetensorsIndex(path);
  if (!index) {
    llvm::consumeError(index.takeError());
    return files;
  }
  files.insert(files.end(), index->shards.begin(), index->shards.end());
  return files;
}
