//===- tfm_quantize.cpp - Weights of any format as a quantized GGUF --------===//
//
// tfm-quantize IN OUT TYPE [--config config.json]   (or --type TYPE; TYPE in
// any case, as llama-quantize's Q4_K_M)
//
// IN is what tfm-run takes weights from: a GGUF file or a Hugging Face
// folder (config.json beside safetensors), or any weight file (a llama2.c
// checkpoint too) with --config naming its model. Its tensors are read as
// f32 through the weight loader, one at a time (so a model larger as f32
// than the machine's memory converts), Hugging Face layouts coming out as
// GGUF stores them, and OUT is a GGUF v3 file with every tensor encoded as TYPE
// says (tfm/common/WeightFileType.h: f32, f16, bf16, the block formats
// q8_0, q4_0, q4_k, q5_k, q6_k, and llama.cpp's q4_k_m and q5_k_m). The
// block layouts are ggml's, so llama.cpp reads the file too. It carries
// llama.cpp's metadata for the model and, from a GGUF, the tokenizer.
//
//===----------------------------------------------------------------------===//
#include "tfm/common/CommandLine.h"
#include "tfm/common/Failure.h"
#include "tfm/common/Manifest.h"
#include "tfm/common/ModelSpec.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/TensorNames.h"
#include "tfm/common/WeightFileType.h"
#include "tfm/runtime/GgufConfig.h"
#include "tfm/runtime/GgufWriter.h"
#include "tfm/runtime/ModelSource.h"
#include "tfm/runtime/Progress.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace tfm;

namespace {

cl::OptionCategory category("tfm-quantize options");
cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                               cl::desc("<GGUF | Hugging Face folder | weight file>"),
                               cl::cat(category));
cl::opt<std::string> outputPath(cl::Positional, cl::Required, cl::desc("<output.gguf>"),
                                cl::cat(category));
cl::opt<std::string> typePositional(cl::Positional, cl::desc("<TYPE>"), cl::cat(category));
cl::opt<std::string> typeOption("type",
                                cl::desc("The type, as the third argument gives it: f32, f16, "
                                         "bf16, q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m or q5_k_m, "
                                         "in any case (Q4_K_M as llama-quantize)"),
                                cl::value_desc("type"), cl::cat(category));
cl::opt<std::string> configPath("config",
                                cl::desc("The model's config.json (needed for a llama2.c "
                                         "checkpoint; default: a GGUF's metadata or the "
                                         "folder's config.json)"),
                                cl::value_desc("file"), cl::cat(category));

int fail(const std::string &message) {
  errs() << "tfm-quantize: error: " << message << "\n";
  return 1;
}

/// The model and the weight file of the input.
struct Input {
  ModelSpec spec;
  std::string weights;
};

Expected<Input> findInput() {
  if (!configPath.empty()) {
    Expected<ModelSpec> spec = loadModelSpec(configPath);
    if (!spec)
      return spec.takeError();
    return Input{std::move(*spec), inputPath};
  }
  if (!sys::fs::is_directory(inputPath)) {
    Expected<rt::WeightFormat> format = rt::detectWeightFormat(inputPath);
    if (!format)
      return format.takeError();
    if (*format != rt::WeightFormat::Gguf)
      return failure(inputPath + ": holds no model config (only a GGUF or a Hugging "
                                           "Face folder does); give it with --config FILE");
  }
  Expected<rt::ModelSource> source = rt::findModelSource(inputPath, /*needTokenizer=*/false);
  if (!source)
    return source.takeError();
  return Input{std::move(source->spec), source->weightsPath};
}

/// The model's tensors as the manifest of a compile would list them.
Manifest manifestOf(const ModelSpec &spec) {
  Manifest manifest;
  manifest.config = spec;
  for (const ModelTensor &t : modelTensors(spec))
    manifest.tensors.push_back({t.name, t.shape, DType::F32});
  return manifest;
}

/// Every "tokenizer." key of a GGUF input, so that the output is a complete model file.
Error copyTokenizer(const std::string &weights, rt::GgufWriter &writer, bool &copied) {
  copied = false;
  Expected<rt::WeightFormat> format = rt::detectWeightFormat(weights);
  if (!format || *format != rt::WeightFormat::Gguf) {
    consumeError(format.takeError());
    return Error::success();
  }
  Expected<std::unique_ptr<rt::GgufFile>> file = rt::GgufFile::open(weights);
  if (!file)
    return file.takeError();
  for (const std::string &key : (*file)->keys())
    if (StringRef(key).starts_with("tokenizer.")) {
      writer.addValue(key, *(*file)->find(key));
      copied = true;
    }
  return Error::success();
}

Error quantize(const WeightFileType &type) {
  Expected<Input> input = findInput();
  if (!input)
    return input.takeError();
  std::vector<std::string> inputs = rt::weightFilesOf(input->weights);
  inputs.push_back(inputPath);
  inputs.push_back(configPath);
  if (Error e = refuseInputAsOutput(outputPath, inputs))
    return e;
  const ModelSpec &spec = input->spec;
  Manifest manifest = manifestOf(spec);

  std::vector<ElementEncoding> encodings;
  uint64_t totalBytes = 0;
  for (const TensorSpec &t : manifest.tensors) {
    std::string fallback;
    ElementEncoding encoding =
        tensorEncoding(type, t.name, t.shape, spec.nLayers, spec.tiedEmbeddings, fallback);
    if (!fallback.empty())
      errs() << "tfm-quantize: note: " << fallback << "; stored as " << encoding.name()
             << "\n";
    totalBytes += encoding.bytes(t.elementCount());
    encodings.push_back(encoding);
  }

  // One tensor converted to f32 at a time, written, and freed.
  Expected<rt::WeightTensors> weights = rt::openWeightTensors(input->weights, manifest, {});
  if (!weights)
    return weights.takeError();

  rt::GgufWriter writer;
  rt::addGgufModelMetadata(spec, writer);
  if (std::optional<uint32_t> fileType = type.llamaFileType())
    writer.addU32("general.file_type", *fileType);
  writer.setAlignment(32);
  bool tokenizerCopied;
  if (Error e = copyTokenizer(input->weights, writer, tokenizerCopied))
    return e;
  for (size_t i = 0; i < manifest.tensors.size(); ++i) {
    const TensorSpec &t = manifest.tensors[i];
    writer.addTensor(t.name, t.shape, rt::ggmlTypeOf(encodings[i]));
  }
  rt::addGgufModelConstants(spec, writer);

  Expected<AtomicOutputFile> output = AtomicOutputFile::create(outputPath);
  if (!output)
    return output.takeError();
  rt::Progress progress("quantizing to " + type.name, totalBytes);
  Error written = writer.write(output->os(), [&](size_t i, raw_ostream &out) -> Error {
    Expected<std::shared_ptr<const void>> values = weights->tensor(i);
    if (!values)
      return values.takeError();
    const TensorSpec &t = manifest.tensors[i];
    const float *read = static_cast<const float *>(values->get());
    // A GGUF stores Gemma's norms as their gain (llama.cpp's converter).
    std::vector<float> gain;
    if (double addend = storedMinusRead(spec, t.name, /*gguf=*/true); addend != 0.0) {
      gain.assign(read, read + t.elementCount());
      for (float &v : gain)
        v += static_cast<float>(addend);
      read = gain.data();
    }
    Expected<std::vector<uint8_t>> bytes =
        encodeFiniteElements(read, static_cast<size_t>(t.elementCount()), encodings[i]);
    if (!bytes)
      return failure(input->weights + ": tensor '" + t.name + "': " +
                                   toString(bytes.takeError()));
    out.write(reinterpret_cast<const char *>(bytes->data()), bytes->size());
    progress.advance(bytes->size());
    return Error::success();
  });
  if (written)
    return written; // the output file is left as it was
  if (Error e = output->commit())
    return e;
  if (!tokenizerCopied)
    errs() << "tfm-quantize: note: " << outputPath
           << " carries no tokenizer (only a GGUF input's is copied); give tfm-run "
              "--tokenizer FILE\n";
  return Error::success();
}

} // namespace

int quantizeMain(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  parseCommandLine(argc, argv, "tfm-quantize: weights of any format as a quantized GGUF\n");
  if (typePositional.empty() == typeOption.empty())
    return fail(typePositional.empty()
                    ? "no type: give it after the output (tfm-quantize IN OUT TYPE) or as --type"
                    : "the type is given twice, as '" + typePositional + "' and --type " +
                          typeOption + "; pass one");
  const std::string typeName = typePositional.empty() ? typeOption : typePositional;
  // llama-quantize's names are upper case (Q4_K_M); ours lower.
  std::optional<WeightFileType> type = parseWeightFileType(StringRef(typeName).lower());
  if (!type)
    return fail("type '" + typeName + "' is not one of " + kWeightFileTypeNames +
                " (in any case)");
  Error e = quantize(*type);
  return e ? fail(toString(std::move(e))) : 0;
}

int main(int argc, char **argv) {
  return tfm::finishStandardOutput(quantizeMain(argc, argv), "tfm-quantize");
}
