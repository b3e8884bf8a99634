//===- SafetensorsOutput.cpp - Weights as a Hugging Face folder -----------===//
#include "SafetensorsOutput.h"

#include "tfm/common/OutputFile.h"

#include "RandomValues.h"

#include "tfm/common/TensorNames.h"
#include "tfm/runtime/Progress.h"
#include "tfm/runtime/SafetensorsWriter.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace tfm;
namespace json = llvm::json;

namespace {

/// `values` (manifest layout, row-major `shape`) in Hugging Face's layout:
/// the inverse of what the runtime's loader undoes.
std::vector<float> toHfLayout(const std::vector<float> &values, const std::vector<int64_t> &shape,
                              HfLayout layout, const ModelSpec &spec) {
  std::vector<float> out(values.size());
  if (layout == HfLayout::Transposed) {
    const int64_t rows = shape[0], cols = shape[1];
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[c * rows + r] = values[r * cols + c];
    return out;
  }
  // Permuted rows: manifest row r is Hugging Face row hfRow(r).
  const int64_t rows = shape[0], width = static_cast<int64_t>(values.size()) / rows;
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(values.begin() + r * width, width,
                out.begin() + hfRow(layout, r, spec) * width);
  return out;
}

const char *safetensorsDtype(DType type) {
  return type == DType::F32 ? "F32" : type == DType::F16 ? "F16" : "BF16";
}

struct HfTensor {
  const WeightTensor *tensor;
  std::string name;
  HfLayout layout;
  std::vector<int64_t> shape; // as stored
};

std::string writeShard(const std::string &path, const std::vector<HfTensor> &tensors,
                       const ModelSpec &spec, uint64_t seed, DType type,
                       rt::Progress &progress) {
  rt::SafetensorsWriter writer;
  for (const HfTensor &t : tensors)
    writer.addTensor(t.name, safetensorsDtype(type), t.shape);
  llvm::Expected<AtomicOutputFile> os = AtomicOutputFile::create(path);
  if (!os)
    return llvm::toString(os.takeError());
  llvm::Error e = writer.write(os->os(), [&](size_t i, llvm::raw_ostream &out) {
    const HfTensor &t = tensors[i];
    if (t.layout == HfLayout::Same || t.layout == HfLayout::RowVector) { // the same bytes
      streamRandomTensor(*t.tensor, seed, ElementEncoding{type, std::nullopt}, out, progress);
    } else {
      std::vector<float> values = toHfLayout(randomTensorValues(*t.tensor, seed),
                                             t.tensor->shape, t.layout, spec);
      writeElements(values.data(), values.size(), ElementEncoding{type, std::nullopt}, out);
      progress.advance(values.size() * dtypeBytes(type));
    }
    return llvm::Error::success();
  });
  if (e) // the output is left as it was
    return path + ": " + llvm::toString(std::move(e));
  llvm::Error committed = os->commit();
  return committed ? llvm::toString(std::move(committed)) : "";
}

} // namespace

std::string tfm::writeSafetensorsFolder(const ModelSpec &spec,
                                        const std::vector<WeightTensor> &tensors, uint64_t seed,
                                        DType type, int64_t shards,
                                        const std::string &dir) {
  if (shards < 1 || shards > static_cast<int64_t>(tensors.size()))
    return "--shards " + std::to_string(shards) + ": expected 1 to " +
           std::to_string(tensors.size()) + " (the model has " +
           std::to_string(tensors.size()) + " tensors)";
  std::vector<HfTensor> hf;
  uint64_t totalBytes = 0;
  for (const WeightTensor &t : tensors) {
    llvm::Expected<HfTensorName> name = hfTensorName(spec, t.name);
    if (!name)
      return llvm::toString(name.takeError());
    std::vector<int64_t> shape = t.shape;
    if (name->layout == HfLayout::Transposed)
      std::reverse(shape.begin(), shape.end());
    if (name->layout == HfLayout::RowVector)
      shape.insert(shape.begin(), 1);
    hf.push_back({&t, name->names.front(), name->layout, shape});
    totalBytes += t.numElements() * dtypeBytes(type);
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return dir + ": cannot create the folder: " + ec.message();

  // Shards take consecutive tensors, as transformers' save_pretrained does.
  std::vector<std::string> written;
  auto fail = [&](const std::string &message) {
    for (const std::string &path : written)
      llvm::sys::fs::remove(path);
    return message;
  };
  rt::Progress progress("writing weights", totalBytes);
  json::Object weightMap;
  const int64_t count = static_cast<int64_t>(hf.size());
  for (int64_t s = 0; s < shards; ++s) {
    std::string file = shards == 1 ? std::string("model.safetensors")
                                   : llvm::formatv("model-{0}-of-{1}.safetensors",
                                                   llvm::format("%05d", s + 1),
                                                   llvm::format("%05d", shards))
                                         .str();
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    std::vector<HfTensor> part(hf.begin() + s * count / shards,
                               hf.begin() + (s + 1) * count / shards);
    written.push_back(path.str().str());
    std::string error = writeShard(path.str().str(), part, spec, seed, type, progress);
    if (!error.empty())
      return fail(error);
    for (const HfTensor &t : part)
      weightMap[t.name] = file;
  }
  if (shards == 1)
    return "";

  llvm::SmallString<256> indexPath(dir);
  llvm::sys::path::append(indexPath, "model.safetensors.index.json");
  json::Object index{{"metadata", json::Object{{"total_size", static_cast<int64_t>(totalBytes)}}},
                     {"weight_map", std::move(weightMap)}};
  if (llvm::Error e = writeTextFile(
          indexPath, llvm::formatv("{0:2}", json::Value(std::move(index))).str() + "\n"))
    return fail(llvm::toString(std::move(e)));
  return "";
}
