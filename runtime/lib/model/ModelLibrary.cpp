//===- ModelLibrary.cpp - dlopen a generated model and check it -----------===//
#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/GpuDevice.h"

#include "tfm/common/Failure.h"
#include "tfm/common/Targets.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>
#include <optional>
#include <vector>

using namespace tfm;
using namespace tfm::rt;
namespace fs = llvm::sys::fs;

namespace {

/// Finds the model library in a tfmc output folder.
llvm::Expected<std::string> findLibrary(const std::string &dir) {
  if (!fs::is_directory(dir))
    return failure(dir + ": model folder does not exist (expected the output folder of tfmc)");
  std::vector<std::string> libraries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (file.starts_with("lib") && file.ends_with(".so"))
      libraries.push_back(it->path());
  }
  if (ec)
    return failure(dir + ": cannot list the model folder: " + ec.message());
  if (libraries.size() == 1)
    return libraries.front();
  if (libraries.empty())
    return failure(dir + ": no model library (lib<name>.so) in this folder; "
                         "expected the output of `tfmc CONFIG -o " + dir + "`");

  // Several libraries: the manifest beside them names the model.
  llvm::SmallString<256> manifestPath(dir);
  llvm::sys::path::append(manifestPath, "manifest.json");
  if (!fs::exists(manifestPath))
    return failure(dir + ": " + std::to_string(libraries.size()) +
                   " libraries (lib*.so) and no manifest.json to choose between them");
  llvm::Expected<Manifest> manifest = readManifestFile(manifestPath.str().str());
  if (!manifest)
    return manifest.takeError();
  llvm::SmallString<256> named(dir);
  llvm::sys::path::append(named, "lib" + manifest->name + ".so");
  if (!fs::exists(named))
    return failure(manifestPath.str().str() + ": names model '" + manifest->name +
                   "' but " + named.str().str() + " does not exist");
  return named.str().str();
}

} // namespace

ModelLibrary::~ModelLibrary() {
  if (handle_)
    dlclose(handle_);
}

llvm::Expected<std::unique_ptr<ModelLibrary>>
ModelLibrary::open(const std::string &dir) {
  llvm::Expected<std::string> path = findLibrary(dir);
  if (!path)
    return path.takeError();

  std::unique_ptr<ModelLibrary> lib(new ModelLibrary());
  lib->source_ = *path;
  lib->handle_ = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_)
    return failure(*path + ": cannot load the model library: " + dlerror());
  auto get = reinterpret_cast<tfm_model_get_fn>(dlsym(lib->handle_, "tfm_model_get"));
  if (!get)
    return failure(*path + ": not a tfm model library: it exports no tfm_model_get");
  lib->model_ = get();
  if (!lib->model_)
    return failure(*path + ": tfm_model_get returned no model");
  llvm::Expected<std::unique_ptr<ModelLibrary>> checked = check(std::move(lib));
  if (!checked)
    return checked.takeError();

  // A manifest.json beside the library must describe this very build.
  llvm::SmallString<256> manifestPath(dir);
  llvm::sys::path::append(manifestPath, "manifest.json");
  if (fs::exists(manifestPath)) {
    llvm::Expected<Manifest> beside = readManifestFile(manifestPath.str().str());
    if (!beside)
      return beside.takeError();
    const std::string &ours = (*checked)->manifest().buildHash;
    if (beside->buildHash != ours)
      return failure(manifestPath.str().str() + ": build_hash " + beside->buildHash +
                     " does not match the library's " + ours + " (" + *path +
                     "); the folder mixes two builds, rerun tfmc");
  }
  return checked;
}

llvm::Expected<std::unique_ptr<ModelLibrary>>
ModelLibrary::fromLinked(const tfm_model *model) {
  if (!model)
    return failure("linked model: tfm_model_get returned no model");
  std::unique_ptr<ModelLibrary> lib(new ModelLibrary());
  lib->model_ = model;
  lib->source_ = std::string("linked model ") + (model->name ? model->name : "(unnamed)");
  return check(std::move(lib));
}

llvm::Expected<std::unique_ptr<ModelLibrary>>
ModelLibrary::check(std::unique_ptr<ModelLibrary> lib) {
  const tfm_model &m = *lib->model_;
  const std::string &src = lib->source_;
  if (m.abi_version != TFM_ABI_VERSION)
    return failure(src + ": model ABI version " + std::to_string(m.abi_version) +
                   ", this runtime expects " + std::to_string(TFM_ABI_VERSION) +
                   " (rebuild the model with the matching tfmc)");
  // The entries say the architecture: a decoder's three, an encoder's
  // encode, or an encoder-decoder's four.
  bool decoding = m.prefill && m.decode && m.score, partly = m.prefill || m.decode || m.score;
  std::optional<Architecture> entries;
  if (decoding)
    entries = m.encode ? Architecture::EncoderDecoder : Architecture::Decoder;
  else if (!partly && m.encode)
    entries = Architecture::Encoder;
  if (!m.manifest_json || !m.build_hash || !m.target || !entries ||
      !m.last_error || !m.release_sequence || !m.set_device || !m.measure_device_copy ||
      !m.measure_device_fma)
    return failure(src + ": the model description lacks its manifest, build hash, target "
                         "or entry points (a decoder's prefill, decode and score, an "
                         "encoder's encode, or all four)");

  llvm::Expected<Manifest> manifest =
      parseManifest(m.manifest_json, src + " (embedded manifest)");
  if (!manifest)
    return manifest.takeError();
  lib->manifest_ = std::move(*manifest);
  const Manifest &man = lib->manifest_;

  auto mismatch = [&](const std::string &what, const std::string &inLibrary,
                      const std::string &inManifest) {
    return failure(src + ": " + what + " is " + inLibrary +
                   " in the model description but " + inManifest +
                   " in its embedded manifest");
  };
  if (man.buildHash != m.build_hash)
    return mismatch("build_hash", m.build_hash, man.buildHash);
  if (man.target != m.target)
    return mismatch("target", m.target, man.target);
  std::vector<std::string> missing = missingCpuFeatures(m.target, hostCpuFeatures());
  if (!missing.empty())
    return failure(src + ": compiled for target " + m.target + ", but this CPU lacks " +
                   llvm::join(missing, "; ") +
                   "; recompile the model here (tfmc --target host), or for features this CPU "
                   "has (--target avx2, avx512, ...)");
  if (llvm::Error e = checkGpuDevice(targetDevice(m.target), src))
    return std::move(e);
  if (man.tensors.size() != m.n_weights)
    return mismatch("the number of weights", std::to_string(m.n_weights),
                    std::to_string(man.tensors.size()));
  if (man.config.vocabSize != m.vocab_size)
    return mismatch("vocab_size", std::to_string(m.vocab_size),
                    std::to_string(man.config.vocabSize));
  if (man.config.contextLength != m.context_length)
    return mismatch("context_length", std::to_string(m.context_length),
                    std::to_string(man.config.contextLength));
  if (man.config.dim != m.hidden_size)
    return mismatch("hidden_size", std::to_string(m.hidden_size), std::to_string(man.config.dim));
  if (man.config.architecture != *entries)
    return mismatch("the entry points", std::string("an ") + variantName(*entries) + "'s",
                    std::string("those of an ") + variantName(man.config.architecture));
  return std::move(lib);
}

bool ModelLibrary::onGpu() const { return targetDevice(model_->target) != TargetDevice::Cpu; }

llvm::Error ModelLibrary::selectDevice(int index) const {
  if (!onGpu())
    return failure(source_ + ": a device was chosen (" + std::to_string(index) +
                   "), but this library runs on the CPU (target " + model_->target + ")");
  if (int rc = model_->set_device(index))
    return failure(source_ + ": device " + std::to_string(index) + " refused (error " +
                   std::to_string(rc) + "): " + model_->last_error());
  return llvm::Error::success();
}

/// A measure_device_* call's result, or an error naming `what` and why.
llvm::Expected<double> ModelLibrary::deviceMeasure(const char *what, int rc, double value) const {
  if (rc)
    return failure(source_ + ": measuring the device's " + what + " failed (error " +
                   std::to_string(rc) + "): " + (onGpu() ? model_->last_error() : "a CPU library"));
  return value;
}

llvm::Expected<double> ModelLibrary::measureDeviceCopy(uint64_t bytes, int repeats) const {
  double gbs = 0;
  int rc = model_->measure_device_copy(bytes, repeats, &gbs);
  return deviceMeasure("copy bandwidth", rc, gbs);
}

llvm::Expected<double> ModelLibrary::measureDeviceFma(int repeats) const {
  double gflops = 0;
  int rc = model_->measure_device_fma(repeats, &gflops);
  return deviceMeasure("multiply-add peak", rc, gflops);
}
