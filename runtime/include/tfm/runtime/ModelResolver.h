//===- ModelResolver.h - From what the user names to a loaded model -*- C++ -*-===//
//
// A model comes from one of three places: linked into the executable
// (`tfmc --emit exe`), a folder tfmc wrote, or a downloaded model (a .gguf or
// a Hugging Face folder), compiled on first use and cached. tfm-run and the
// C API (tfm.h) both start here.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_MODELRESOLVER_H
#define TFM_RUNTIME_MODELRESOLVER_H

#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace tfm::rt {

/// What names a model, and how a downloaded one is compiled.
struct ModelRequest {
  std::string model;       // a folder tfmc wrote, or a .gguf / Hugging Face folder
  std::string downloaded;  // a .gguf or Hugging Face folder only (tfm-run --model-dir)
  std::string weights;     // empty: the downloaded model's own
  std::string tokenizer;   // empty: the downloaded model's own, or the GGUF weights'
  std::string target = "host", schedule, activations; // tfmc's, for a downloaded model
  std::string cacheDir;    // empty: defaultCacheDir()
  std::string tfmc;        // empty: compilerPath()
};

/// The compiled model, and the weight and tokenizer files that go with it.
struct ResolvedModel {
  std::unique_ptr<ModelLibrary> library;
  std::string weights, tokenizer;
  /// The tokenizer, when it was loaded before a compile to check it (a
  /// download's), so that it is not loaded twice; else null.
  std::unique_ptr<Tokenizer> loadedTokenizer;
};

/// Whether `path` names a folder tfmc wrote rather than a downloaded model:
/// any folder but a Hugging Face one (its config.json); a file is a GGUF.
bool isLibraryFolder(const std::string &path);

/// Finds, compiles when needed, and opens the model `request` names, or the
/// one `linked` into this executable. Refuses no model, two models, and a
/// model with no tokenizer, naming the flags that give one. The weights
/// may stay empty (--tokenize needs none).
llvm::Expected<ResolvedModel> resolveModel(const ModelRequest &request, const tfm_model *linked);

} // namespace tfm::rt

#endif // TFM_RUNTIME_MODELRESOLVER_H
