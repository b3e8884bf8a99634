//===- DownloadedModel.cpp - A .gguf or Hugging Face folder as tfmc's input ===//
#include "DownloadedModel.h"

#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/ModelSource.h"
#include "tfm/runtime/TokenizerFactory.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace fs = llvm::sys::fs;
using namespace tfm;

namespace {

llvm::Expected<std::string> absolute(const std::string &path) {
  llvm::SmallString<256> full(path);
  if (std::error_code ec = fs::make_absolute(full))
    return failure(path + ": cannot make the path absolute: " + ec.message());
  llvm::sys::path::remove_dots(full, /*remove_dot_dot=*/true);
  return std::string(full);
}

/// Copies `from` to `outDir`/its name; returns the name.
llvm::Expected<std::string> copyInto(const std::string &from, const std::string &outDir) {
  std::string name = llvm::sys::path::filename(from).str();
  llvm::SmallString<256> to(outDir);
  llvm::sys::path::append(to, name);
  if (llvm::Error e = refuseInputAsOutput(std::string(to), {from}))
    return std::move(e);
  if (std::error_code ec = fs::copy_file(from, to))
    return failure("--bundle: cannot copy " + from + " to " + std::string(to) + ": " +
                   ec.message());
  return name;
}

} // namespace

bool tfm::isDownloadedModel(const std::string &input) {
  return fs::is_directory(input) || rt::hasGgufMagic(input);
}

llvm::Expected<DownloadedModel> tfm::findDownloadedModel(const std::string &input) {
  llvm::Expected<rt::ModelSource> source = rt::findModelSource(input, /*needTokenizer=*/false);
  if (!source)
    return source.takeError();
  DownloadedModel model{std::move(source->spec), {}};
  llvm::Expected<std::string> weights = absolute(source->weightsPath);
  if (!weights)
    return weights.takeError();
  model.files.weights = *weights;
  // A GGUF is its own tokenizer; a folder's is found as tfm-run finds it.
  // Without one the library is still compiled, and tfm-run asks for
  // --tokenizer.
  std::string tokenizer = source->tokenizerPath;
  if (tokenizer.empty()) {
    if (llvm::Expected<std::string> found = rt::findTokenizerFile(input))
      tokenizer = *found;
    else
      llvm::consumeError(found.takeError());
  }
  if (!tokenizer.empty()) {
    llvm::Expected<std::string> full = absolute(tokenizer);
    if (!full)
      return full.takeError();
    model.files.tokenizer = *full;
  }
  return model;
}

llvm::Expected<ModelFiles> tfm::bundleModelFiles(const DownloadedModel &model,
                                                const std::string &outDir) {
  ModelFiles bundled;
  for (const std::string &file : rt::weightFilesOf(model.files.weights)) {
    llvm::Expected<std::string> name = copyInto(file, outDir);
    if (!name)
      return name.takeError();
    if (file == model.files.weights)
      bundled.weights = *name;
  }
  if (model.files.tokenizer == model.files.weights)
    bundled.tokenizer = bundled.weights;
  else if (!model.files.tokenizer.empty()) {
    llvm::Expected<std::string> name = copyInto(model.files.tokenizer, outDir);
    if (!name)
      return name.takeError();
    bundled.tokenizer = *name;
  }
  return bundled;
}
