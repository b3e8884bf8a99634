//===- FuzzSupport.cpp - What every fuzz target shares --------------------===//
#include "FuzzSupport.h"

#include "tfm/common/TensorNames.h"
#include "tfm/common/model_abi.h"
#include "tfm/runtime/TokenizerFactory.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <unistd.h>

using namespace tfm;

std::string fuzz::writeInput(llvm::StringRef name, const uint8_t *data, size_t size) {
  static const std::string dir = [] {
    llvm::SmallString<128> base;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, base);
    llvm::sys::path::append(base, "tfm-fuzz-" + std::to_string(::getpid()));
    return std::string(base);
  }();
  // Each run writes a folder of its own; left behind, they pile up in /tmp.
  // Registered once dir is built, so that it runs before dir is destroyed.
  static const int removedAtExit =
      std::atexit([] { llvm::sys::fs::remove_directories(dir); });
  (void)removedAtExit;
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    propertyFailed("cannot write the fuzz input " + std::string(path));
  return std::string(path);
}

const Manifest &fuzz::tinyManifest(llvm::StringRef family) {
  static std::map<std::string, Manifest> manifests;
  Manifest &m = manifests[family.str()];
  if (!m.tensors.empty())
    return m;
  ModelSpec &s = m.config;
  s.name = "tiny_" + family.str();
  s.family = *parseVariant<Family>(family);
  bool llama = s.family == Family::Llama;
  s.norm = llama ? Norm::RmsNorm : Norm::LayerNorm;
  s.activation = llama ? Activation::Silu : Activation::GeluTanh;
  s.positions = llama ? Positions::Rope : Positions::Learned;
  s.normBias = s.fusedQkv = s.qkvBias = s.attnOutBias = s.ffnBias = !llama;
  s.ffn = llama ? FfnKind::Gated : FfnKind::Plain;
  s.tiedEmbeddings = !llama;
  s.dim = 8;
  s.hiddenDim = 16;
  s.nLayers = 2;
  s.nHeads = 2;
  s.nKvHeads = 2;
  s.headDim = 4;
  s.rotaryDim = llama ? 4 : 0;
  s.vocabSize = 16;
  s.contextLength = 8;
  s.bosTokenId = 1;
  s.eosTokenId = 2;
  m.abiVersion = TFM_ABI_VERSION;
  m.name = s.name;
  for (const ModelTensor &t : modelTensors(s))
    m.tensors.push_back({t.name, t.shape, DType::F32});
  return m;
}

std::string fuzz::sharedModelsDir() {
  const char *shared = std::getenv("TFM_SHARED_DIR");
  std::string dir = std::string(shared ? shared : "") + "/models";
  if (!shared || !llvm::sys::fs::is_directory(dir)) {
    llvm::errs() << "TFM_SHARED_DIR" << (shared ? "/models (" + dir + ") is missing" : " is not set")
                 << ": the real tokenizers are not there\n";
    return "";
  }
  return dir;
}

int fuzz::checkMessage(llvm::Error error) {
  // Paths and our own words, plus file excerpts cut to kQuotedTextLimit.
  constexpr size_t kMaxMessageBytes = 4096;
  std::string message = llvm::toString(std::move(error));
  if (message.size() > kMaxMessageBytes)
    propertyFailed("a " + std::to_string(message.size()) + "-byte message: " +
                   message.substr(0, 300) + "...");
  for (unsigned char c : message)
    if ((c < 0x20 && c != '\n') || c == 0x7f)
      propertyFailed("a raw control byte " + std::to_string(c) + " in the message: " + message);
  return 0;
}

void fuzz::loadAndUseTokenizer(const std::string &path, const std::string &text) {
  auto tokenizer = rt::loadStandaloneTokenizer(path);
  if (!tokenizer) {
    checkMessage(tokenizer.takeError());
    return;
  }
  int32_t previous = -1;
  for (int32_t id : (*tokenizer)->encode(text, (*tokenizer)->addsBos())) {
    if (id < 0 || id >= (*tokenizer)->vocabSize())
      propertyFailed(path + ": encode gave id " + std::to_string(id) +
                     " outside a vocabulary of " + std::to_string((*tokenizer)->vocabSize()));
    (*tokenizer)->decode(previous, id);
    previous = id;
  }
}

void fuzz::propertyFailed(const std::string &message) {
  llvm::errs() << "property failed: " << message << "\n";
  std::abort();
}
