//===- ModelResolver.cpp - From what the user names to a loaded model -----===//
#include "tfm/runtime/ModelResolver.h"

#include "tfm/common/Failure.h"
#include "tfm/runtime/GgufFile.h"
#include "tfm/runtime/ModelCache.h"
#include "tfm/runtime/ModelSource.h"
#include "tfm/runtime/TokenizerFactory.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace tfm;
using namespace tfm::rt;

namespace {

std::string executableFolder() {
  static int anchor;
  return llvm::sys::path::parent_path(llvm::sys::fs::getMainExecutable(nullptr, &anchor)).str();
}

std::string resolveAgainst(const std::string &base, const std::string &path) {
  if (llvm::sys::path::is_absolute(path))
    return path;
  llvm::SmallString<256> full(base);
  llvm::sys::path::append(full, path);
  return std::string(full);
}

/// What a compile cannot find out for itself is checked before one is
/// started: that the tokenizer loads (the config was parsed, and
/// compiledModelDir checks the weights' tensors). It is kept in `resolved`,
/// its path set.
llvm::Error loadTokenizerBeforeCompile(const ModelSpec &spec, ResolvedModel &resolved,
                                       const std::string &foundTokenizer) {
  if (resolved.tokenizer.empty())
    resolved.tokenizer = foundTokenizer;
  if (resolved.tokenizer.empty() && !resolved.weights.empty() && hasGgufMagic(resolved.weights))
    resolved.tokenizer = resolved.weights;
  if (resolved.tokenizer.empty())
    return llvm::Error::success(); // the library's recorded files may name one
  llvm::Expected<std::unique_ptr<Tokenizer>> loaded = loadTokenizer(resolved.tokenizer, spec);
  if (!loaded)
    return loaded.takeError();
  resolved.loadedTokenizer = std::move(*loaded);
  return llvm::Error::success();
}

} // namespace

bool tfm::rt::isLibraryFolder(const std::string &path) {
  llvm::SmallString<256> config(path);
  llvm::sys::path::append(config, "config.json");
  return llvm::sys::fs::is_directory(path) && !llvm::sys::fs::exists(config);
}

llvm::Expected<ResolvedModel> tfm::rt::resolveModel(const ModelRequest &request,
                                                    const tfm_model *linked) {
  int sources = !request.model.empty() + !request.downloaded.empty() + (linked != nullptr);
  if (linked && sources > 1)
    return failure(std::string("this executable has model '") +
                   (linked->name ? linked->name : "?") +
                   "' linked in; --model and --model-dir are not accepted");
  if (sources == 0)
    return failure("no model: pass --model DIR (a folder tfmc wrote) or --model-dir PATH "
                   "(a Hugging Face folder or a .gguf file)");
  if (sources > 1)
    return failure("--model and --model-dir name two models; pass one");

  ResolvedModel resolved{nullptr, request.weights, request.tokenizer};
  // --model (-m) takes what --model-dir takes too, as llama.cpp's -m does.
  bool compiled = !request.model.empty() && isLibraryFolder(request.model);
  std::string libraryDir = compiled ? request.model : "";
  std::string sourcePath = compiled ? request.downloaded : request.model + request.downloaded;
  if (!sourcePath.empty()) {
    // A folder's own tokenizer is looked for only when none is given.
    llvm::Expected<ModelSource> source =
        findModelSource(sourcePath, /*needTokenizer=*/request.tokenizer.empty());
    if (!source)
      return source.takeError();
    if (resolved.weights.empty())
      resolved.weights = source->weightsPath;
    if (llvm::Error e = loadTokenizerBeforeCompile(source->spec, resolved, source->tokenizerPath))
      return std::move(e);
    // Kernels read the weights as the file stores them.
    CompileRequest compile{source->spec,     request.target,   request.schedule,
                           request.activations, resolved.weights, request.cacheDir,
                           request.tfmc};
    llvm::Expected<std::string> compiledDir = compiledModelDir(compile);
    if (!compiledDir)
      return compiledDir.takeError();
    libraryDir = *compiledDir;
  }
  auto library = linked ? ModelLibrary::fromLinked(linked) : ModelLibrary::open(libraryDir);
  if (!library)
    return library.takeError();
  resolved.library = std::move(*library);
  // A library compiled from a download (tfmc model.gguf) records its files,
  // relative to its folder, or to the executable's with the model linked in
  // (tfmc --emit exe --bundle).
  const ModelFiles &files = resolved.library->manifest().files;
  std::string base = linked ? executableFolder() : libraryDir;
  if (resolved.weights.empty() && !files.weights.empty())
    resolved.weights = resolveAgainst(base, files.weights);
  if (resolved.tokenizer.empty() && !files.tokenizer.empty())
    resolved.tokenizer = resolveAgainst(base, files.tokenizer);
  // A GGUF carries its tokenizer, as llama.cpp uses it.
  if (resolved.tokenizer.empty() && !resolved.weights.empty() && hasGgufMagic(resolved.weights))
    resolved.tokenizer = resolved.weights;
  if (resolved.tokenizer.empty())
    return failure("no tokenizer: pass --tokenizer FILE (tokenizer.json, vocab.json, "
                   "tokenizer.model, encoder.json, tokenizer.bin or a .gguf)");
  return resolved;
}
