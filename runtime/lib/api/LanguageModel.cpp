//===- LanguageModel.cpp - tfm.h: load a model, its metadata, its tokens --===//
#include "ApiHandles.h"

#include "tfm/runtime/ModelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <dlfcn.h>

using namespace tfm;
using namespace tfm::rt;
using tfm::api::fail;
using tfm::api::failNull;
using tfm::api::guarded;

namespace {

/// The tfmc that goes with this libtfm.so: $TFMC when set, as tfm-run
/// prefers it; else bin/tfmc of the install this library was loaded from
/// (TFM_LIBRARY_TO_BIN: the install's bin/ relative to its lib/), or of the
/// build (build/bin beside build/lib).
std::string compilerBesideLibrary() {
  const char *fromEnv = std::getenv("TFMC");
  if (fromEnv && *fromEnv)
    return fromEnv;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&tfm_lm_load), &info) || !info.dli_fname)
    return compilerPath();
  llvm::StringRef libraryDir = llvm::sys::path::parent_path(info.dli_fname);
  std::string first;
  for (const char *toBin : {TFM_LIBRARY_TO_BIN, "../bin"}) {
    llvm::SmallString<256> path(libraryDir);
    llvm::sys::path::append(path, toBin, "tfmc");
    if (llvm::sys::fs::exists(path))
      return std::string(path);
    if (first.empty())
      first = std::string(path); // named in the error when neither is there
  }
  return first;
}

std::string orEmpty(const char *text) { return text ? text : ""; }

int threadsOf(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int load(const char *path, const tfm_load_params &params, tfm_lm **out) {
  ModelRequest request;
  request.model = path;
  request.weights = orEmpty(params.weights);
  request.tokenizer = orEmpty(params.tokenizer);
  if (params.target)
    request.target = params.target;
  request.schedule = orEmpty(params.schedule);
  request.activations = orEmpty(params.activations);
  request.cacheDir = orEmpty(params.cache_dir);
  request.tfmc = params.compiler ? params.compiler : compilerBesideLibrary();
  if (params.threads < 0)
    return fail("tfm_lm_load: threads is " + std::to_string(params.threads) +
                ", expected 0 (every core) or more");
  if (params.device < -1)
    return fail("tfm_lm_load: device is " + std::to_string(params.device) +
                ", expected -1 (the driver's first) or a device number");

  auto lm = std::make_unique<tfm_lm>();
  llvm::Expected<std::unique_ptr<LoadedModel>> loaded = LoadedModel::open(request, nullptr);
  if (!loaded)
    return fail(loaded.takeError());
  lm->model = std::move(*loaded);
  if (lm->model->weightsPath().empty())
    return fail(std::string(path) + ": a folder tfmc wrote needs its weights: set "
                "tfm_load_params.weights (safetensors, GGUF or llama2.c .bin)");
  std::optional<int> device;
  if (params.device >= 0)
    device = params.device;
  RunSettings settings{params.no_mmap ? WeightMemory::Resident : WeightMemory::Mapped,
                       threadsOf(params.threads), device};
  if (llvm::Error e = lm->model->bind(settings))
    return fail(std::move(e));
  const tfm_model &model = lm->model->library().model();
  lm->manifestJson = model.manifest_json ? model.manifest_json : "";
  *out = lm.release();
  return 0;
}

const ModelSpec &configOf(const tfm_lm *lm) { return lm->model->manifest().config; }

/// Copies `text` to `out` (at most `capacity` bytes); returns its length.
int64_t copyOut(const std::string &text, char *out, size_t capacity) {
  if (out)
    std::memcpy(out, text.data(), std::min(capacity, text.size()));
  return static_cast<int64_t>(text.size());
}

} // namespace

extern "C" tfm_load_params tfm_load_default_params(void) {
  tfm_load_params params{};
  params.device = -1;
  return params;
}

extern "C" int tfm_lm_load(const char *path, const tfm_load_params *params, tfm_lm **lm) {
  if (!path)
    return failNull("tfm_lm_load", "path");
  if (!lm)
    return failNull("tfm_lm_load", "lm");
  *lm = nullptr;
  tfm_load_params defaults = tfm_load_default_params();
  return guarded("tfm_lm_load", [&] { return load(path, params ? *params : defaults, lm); });
}

extern "C" void tfm_lm_free(tfm_lm *lm) { delete lm; }

extern "C" const char *tfm_lm_name(const tfm_lm *lm) { return configOf(lm).name.c_str(); }

extern "C" const char *tfm_lm_target(const tfm_lm *lm) {
  return lm->model->manifest().target.c_str();
}

extern "C" int64_t tfm_lm_vocab_size(const tfm_lm *lm) { return configOf(lm).vocabSize; }

extern "C" int64_t tfm_lm_context_length(const tfm_lm *lm) {
  return configOf(lm).contextLength;
}

extern "C" int64_t tfm_lm_layers(const tfm_lm *lm) { return configOf(lm).nLayers; }

extern "C" int64_t tfm_lm_hidden_size(const tfm_lm *lm) { return configOf(lm).dim; }

extern "C" int tfm_lm_is_encoder(const tfm_lm *lm) { return configOf(lm).encoder() ? 1 : 0; }

extern "C" const char *tfm_lm_manifest_json(const tfm_lm *lm) { return lm->manifestJson.c_str(); }

extern "C" int tfm_lm_set_threads(tfm_lm *lm, int threads) {
  if (threads < 0)
    return fail("tfm_lm_set_threads: threads is " + std::to_string(threads) +
                ", expected 0 (every core) or more");
  const tfm_model &model = lm->model->library().model();
  if (model.set_num_threads)
    model.set_num_threads(threadsOf(threads));
  return 0;
}

extern "C" int32_t tfm_lm_bos(const tfm_lm *lm) { return lm->model->tokenizer().bosId(); }

extern "C" int32_t tfm_lm_eos(const tfm_lm *lm) { return lm->model->tokenizer().eosId(); }

extern "C" int tfm_lm_adds_bos(const tfm_lm *lm) { return lm->model->tokenizer().addsBos(); }

extern "C" int64_t tfm_lm_tokenize(const tfm_lm *lm, const char *text, size_t length,
                                   int add_bos, int32_t *ids, int64_t capacity) {
  if (!text && length > 0)
    return failNull("tfm_lm_tokenize", "text");
  if (capacity < 0 || (!ids && capacity > 0))
    return fail("tfm_lm_tokenize: capacity is " + std::to_string(capacity) +
                (ids ? "" : " with ids NULL") + ", expected room for the ids (0 to count them)");
  return guarded("tfm_lm_tokenize", [&]() -> int64_t {
    std::vector<int32_t> tokens =
        lm->model->tokenizer().encode(std::string(text ? text : "", length), add_bos != 0);
    std::copy_n(tokens.begin(), std::min<int64_t>(capacity, tokens.size()), ids);
    return static_cast<int64_t>(tokens.size());
  });
}

extern "C" int64_t tfm_lm_token_text(const tfm_lm *lm, int32_t previous, int32_t token,
                                     char *text, size_t capacity) {
  int64_t vocab = lm->model->tokenizer().vocabSize();
  if (token < 0 || token >= vocab || previous < -1 || previous >= vocab)
    return fail("tfm_lm_token_text: token " + std::to_string(token) + " after " +
                std::to_string(previous) + ", expected ids in [0, " + std::to_string(vocab) +
                ") (previous -1 at the start)");
  return guarded("tfm_lm_token_text", [&] {
    return copyOut(lm->model->tokenizer().decode(previous, token), text, capacity);
  });
}
