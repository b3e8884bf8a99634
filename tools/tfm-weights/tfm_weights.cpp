//===- tfm_weights.cpp - Random weights for any model ----------------------===//
//
// tfm-weights (CONFIG | --model DIR) -o OUT [--format llama2c|safetensors|gguf]
//             [--dtype f32|f16|bf16|q8_0|q4_0|q4_k|q5_k|q6_k|q4_k_m|q5_k_m]
//             [--shards N]
//             [--vocab FILE.gguf] [--seed N]
//
// Writes deterministic random weights, so any shape can be compiled, run and
// checked against the reference without a real checkpoint. The tensor list
// comes from a config or from a compiled model's manifest (--model), both
// through the one tensor table (tfm/common/TensorNames.h). Each tensor's
// values depend only on its name and the seed, never on the format. A GGUF
// can take its tokenizer from a vocabulary GGUF (--vocab), so that random
// weights make a complete model file.
//
//===----------------------------------------------------------------------===//
#include "GgufOutput.h"
#include "Llama2cWriter.h"
#include "SafetensorsOutput.h"
#include "WeightTensors.h"

#include "tfm/common/CommandLine.h"
#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/Manifest.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

using tfm::failure;

namespace {

enum class WeightFormat { Llama2c, Safetensors, Gguf };

cl::OptionCategory category("tfm-weights options");

cl::opt<std::string> configPath(cl::Positional, cl::desc("<config.json>"), cl::cat(category));
cl::opt<std::string> modelDir("model",
                              cl::desc("Model folder written by tfmc: its "
                                       "manifest.json lists the tensors"),
                              cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> outputPath("o", cl::Required,
                                cl::desc("File to write (for safetensors: a folder)"),
                                cl::value_desc("path"), cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::init(0), cl::desc("Random seed (default 0)"), cl::cat(category));
cl::opt<WeightFormat>
    fileFormat("format",
               cl::desc("File format (default: from -o's name: .gguf a GGUF, .bin a llama2.c "
                        "checkpoint, a name without extension a safetensors folder)"),
               cl::values(clEnumValN(WeightFormat::Llama2c, "llama2c",
                                     "llama2.c checkpoint: 7 int32 header, then f32 tensors"),
                          clEnumValN(WeightFormat::Safetensors, "safetensors",
                                     "Hugging Face names and layouts, in a folder"),
                          clEnumValN(WeightFormat::Gguf, "gguf", "GGUF v3 under llama.cpp names")),
               cl::cat(category));
cl::opt<std::string>
    dtypeName("dtype", cl::init("f32"),
              cl::desc("Element type: f32 (default), f16, bf16 (safetensors, gguf); q8_0, q4_0, "
                       "q4_k, q5_k, q6_k, and llama.cpp's mixes q4_k_m, q5_k_m (gguf: matrices in "
                       "GGUF's block formats, vectors in f32)"),
              cl::value_desc("type"), cl::cat(category));
cl::opt<int64_t> shards("shards", cl::init(1),
                        cl::desc("Safetensors files to spread the tensors over (default 1)"),
                        cl::cat(category));
cl::opt<std::string> vocabPath("vocab",
                               cl::desc("GGUF whose tokenizer metadata the GGUF written "
                                        "carries (e.g. llama.cpp's ggml-vocab-gpt-2.gguf), "
                                        "padded with unused tokens to the vocab_size"),
                               cl::value_desc("file.gguf"), cl::cat(category));

int fail(const std::string &message) {
  errs() << "tfm-weights: error: " << message << "\n";
  return 1;
}

/// The model and its tensors: from the manifest, or from a config.
struct Model {
  tfm::ModelSpec spec;
  std::string source; // the file the model came from, for messages
  std::vector<tfm::WeightTensor> tensors;
};

Expected<Model> loadModel() {
  Model m;
  if (modelDir.empty()) {
    Expected<tfm::ModelSpec> spec = tfm::loadModelSpec(configPath);
    if (!spec)
      return spec.takeError();
    m.spec = std::move(*spec);
    m.source = configPath;
    m.tensors = tfm::weightTensors(m.spec);
    return m;
  }
  SmallString<256> path(modelDir);
  sys::path::append(path, "manifest.json");
  m.source = path.str().str();
  Expected<tfm::Manifest> manifest = tfm::readManifestFile(m.source);
  if (!manifest)
    return failure(toString(manifest.takeError()) + " (is " + modelDir +
                                 " a model folder written by tfmc?)");
  m.spec = manifest->config;
  for (const tfm::TensorSpec &t : manifest->tensors) {
    Expected<tfm::WeightTensor> tensor = tfm::weightTensorFor(t.name, t.shape);
    if (!tensor)
      return failure(m.source + ": " + toString(tensor.takeError()));
    // Without --dtype, each tensor as the compiled model reads it.
    if (!dtypeName.getNumOccurrences())
      tensor->encoding = t.dtype;
    m.tensors.push_back(std::move(*tensor));
  }
  return m;
}

/// Option combinations that cannot work, or "".
std::string usageError(const tfm::WeightFileType &type) {
  const bool fromConfig = !configPath.empty(), fromModel = !modelDir.empty();
  if (fromConfig == fromModel)
    return fromConfig ? "give a config or --model DIR, not both"
                      : "give a config or --model DIR (a folder written by tfmc)";
  const char *name = fileFormat == WeightFormat::Safetensors ? "safetensors"
                     : fileFormat == WeightFormat::Gguf      ? "gguf"
                                                         : "llama2c";
  const bool allF32 = !type.matrices.block && type.matrices.plain == tfm::DType::F32;
  if (fileFormat == WeightFormat::Llama2c && !allF32)
    return "--dtype: the llama2c format holds f32 only";
  if (type.matrices.block && fileFormat != WeightFormat::Gguf)
    return "--dtype " + type.name + ": block formats are written as GGUF only (--format gguf)";
  if (shards.getNumOccurrences() && fileFormat != WeightFormat::Safetensors)
    return std::string("--shards applies to --format safetensors, not ") + name;
  if (!vocabPath.empty() && fileFormat != WeightFormat::Gguf)
    return std::string("--vocab applies to --format gguf, not ") + name;
  return "";
}

std::string writeLlama2cFile(const Model &m) {
  std::string unsupported = tfm::llama2cUnsupportedReason(m.spec, m.source);
  if (!unsupported.empty())
    return unsupported;
  Expected<tfm::AtomicOutputFile> os = tfm::AtomicOutputFile::create(outputPath);
  if (!os)
    return toString(os.takeError());
  std::string error = tfm::writeLlama2c(m.spec, m.tensors, seed, os->os());
  if (!error.empty()) // the output is left as it was
    return outputPath + ": " + error;
  Error committed = os->commit();
  return committed ? toString(std::move(committed)) : "";
}

} // namespace

/// --format, or the format -o's name says, as llama.cpp's tools take a
/// .gguf for a GGUF.
Expected<WeightFormat> outputFormat() {
  if (fileFormat.getNumOccurrences())
    return fileFormat.getValue();
  std::string extension = sys::path::extension(outputPath).lower();
  if (extension == ".gguf")
    return WeightFormat::Gguf;
  if (extension == ".bin")
    return WeightFormat::Llama2c;
  if (extension.empty())
    return WeightFormat::Safetensors;
  return tfm::failure("-o " + outputPath + ": cannot tell the format from '" + extension +
                      "'; name a .gguf or a .bin file or a folder (safetensors), or pass "
                      "--format gguf|llama2c|safetensors");
}

int writeWeights(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  tfm::parseCommandLine(argc, argv, "tfm-weights: random weights for a model\n");
  Expected<WeightFormat> format = outputFormat();
  if (!format)
    return fail(toString(format.takeError()));
  fileFormat = *format;
  std::optional<tfm::WeightFileType> type = tfm::parseWeightFileType(dtypeName);
  if (!type)
    return fail("--dtype: '" + dtypeName + "' is not one of " + tfm::kWeightFileTypeNames);
  std::string usage = usageError(*type);
  if (!usage.empty())
    return fail(usage);
  Expected<Model> model = loadModel();
  if (!model)
    return fail(toString(model.takeError()));
  if (Error e = tfm::refuseInputAsOutput(outputPath, {configPath, model->source, vocabPath}))
    return fail(toString(std::move(e)));
  if (fileFormat != WeightFormat::Gguf) {
    // safetensors and llama2c hold one plain type: the manifest's, if it
    // reads every tensor alike.
    for (const tfm::WeightTensor &t : model->tensors)
      if (t.encoding && (t.encoding->block || *t.encoding != *model->tensors[0].encoding))
        return fail(model->source + ": the compiled model reads tensor '" + t.name + "' as " +
                    t.encoding->name() + " and '" + model->tensors[0].name + "' as " +
                    model->tensors[0].encoding->name() +
                    "; only --format gguf holds block formats and mixed types");
    if (!model->tensors.empty() && model->tensors[0].encoding)
      type = tfm::parseWeightFileType(model->tensors[0].encoding->name());
    if (std::string usage = usageError(*type); !usage.empty())
      return fail(usage);
  }

  std::string error;
  switch (fileFormat) {
  case WeightFormat::Llama2c:
    error = writeLlama2cFile(*model);
    break;
  case WeightFormat::Safetensors:
    error = tfm::writeSafetensorsFolder(model->spec, model->tensors, seed,
                                        type->matrices.plain, shards,
                                        outputPath);
    break;
  case WeightFormat::Gguf: {
    std::unique_ptr<tfm::rt::GgufFile> vocabulary;
    if (!vocabPath.empty()) {
      auto opened = tfm::openVocabulary(vocabPath, model->spec, model->source);
      if (!opened)
        return fail(toString(opened.takeError()));
      vocabulary = std::move(*opened);
    }
    error = tfm::writeGgufFile(model->spec, model->tensors, seed,
                               *type, vocabulary.get(), outputPath);
    break;
  }
  }
  return error.empty() ? 0 : fail(error);
}

int main(int argc, char **argv) {
  return tfm::finishStandardOutput(writeWeights(argc, argv), "tfm-weights");
}
