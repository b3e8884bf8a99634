//===- ModelSource.cpp - A downloaded model, found on disk ----------------===//
#include "tfm/runtime/ModelSource.h"
#include "tfm/common/Failure.h"

#include "tfm/runtime/GgufConfig.h"
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/TokenizerFactory.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace tfm;
using namespace tfm::rt;
namespace fs = llvm::sys::fs;

namespace {

std::string join(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// The first of `names` that exists in `dir`, or "".
std::string firstExisting(const std::string &dir, std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (fs::exists(join(dir, name)))
      return join(dir, name);
  return "";
}

/// Files in `dir` whose name ends with `suffix`, sorted.
std::vector<std::string> filesEndingWith(const std::string &dir, llvm::StringRef suffix) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(suffix))
      found.push_back(it->path());
  llvm::sort(found);
  return found;
}

llvm::Expected<ModelSource> fromGguf(const std::string &path) {
  auto file = GgufFile::open(path);
  if (!file)
    return file.takeError();
  llvm::Expected<ModelSpec> spec = modelSpecFromGguf(**file, llvm::sys::path::stem(path).str());
  if (!spec)
    return spec.takeError();
  return ModelSource{std::move(*spec), path, path};
}

llvm::Expected<ModelSource> fromFolder(const std::string &dir, bool needTokenizer) {
  ModelSource source;
  std::string configPath = join(dir, "config.json");
  if (!fs::exists(configPath))
    return failure(dir + ": no config.json; expected a Hugging Face model folder "
                         "(config.json, *.safetensors, tokenizer files) or a .gguf file");
  llvm::Expected<ModelSpec> spec = loadModelSpec(configPath);
  if (!spec)
    return spec.takeError();
  source.spec = std::move(*spec);

  source.weightsPath = firstExisting(dir, {"model.safetensors.index.json", "model.safetensors"});
  if (source.weightsPath.empty()) {
    std::vector<std::string> safetensors = filesEndingWith(dir, ".safetensors");
    if (safetensors.size() == 1)
      source.weightsPath = safetensors.front();
    else if (safetensors.size() > 1)
      return failure(dir + ": " + std::to_string(safetensors.size()) +
                     " .safetensors files but no model.safetensors.index.json saying which "
                     "tensor is where; pass --weights");
  }
  if (source.weightsPath.empty())
    // The loader explains why a PyTorch pickle cannot be used.
    source.weightsPath = firstExisting(dir, {"pytorch_model.bin", "pytorch_model.bin.index.json"});
  if (source.weightsPath.empty())
    return failure(dir + ": no weights: looked for model.safetensors.index.json, "
                         "model.safetensors and *.safetensors");

  if (!needTokenizer)
    return source;
  llvm::Expected<std::string> tokenizer = findTokenizerFile(dir);
  if (!tokenizer)
    return tokenizer.takeError();
  source.tokenizerPath = *tokenizer;
  return source;
}

} // namespace

llvm::Expected<ModelSource> tfm::rt::findModelSource(const std::string &path,
                                                     bool needTokenizer) {
  if (fs::is_directory(path))
    return fromFolder(path, needTokenizer);
  if (!fs::exists(path))
    return failure(path + ": no such file or folder; expected a Hugging Face model folder or a "
                          ".gguf file");
  return fromGguf(path);
}
