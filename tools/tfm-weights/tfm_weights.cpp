//===- tfm_weights.cpp - Random weights for any model config ---------------===//
//
// tfm-weights CONFIG -o FILE [--seed N] [--format llama2c]
//
// Writes deterministic random weights for the model a config describes, so
// any shape can be compiled, run and checked against the reference without
// a real checkpoint. The same config and seed always give the same bytes.
//
//===----------------------------------------------------------------------===//
#include "Llama2cWriter.h"
#include "WeightTensors.h"

#include "tfm/Config/ModelSpec.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

enum class WeightFormat { Llama2c };

cl::opt<std::string> configPath(cl::Positional, cl::Required,
                                cl::desc("<config.json>"));
cl::opt<std::string> outputPath("o", cl::Required, cl::desc("Weight file to write"),
                                cl::value_desc("file"));
cl::opt<uint64_t> seed("seed", cl::init(0), cl::desc("Random seed (default 0)"));
cl::opt<WeightFormat> format(
    "format", cl::init(WeightFormat::Llama2c), cl::desc("File format"),
    cl::values(clEnumValN(WeightFormat::Llama2c, "llama2c",
                          "llama2.c checkpoint: 7 int32 header, then f32 tensors")));

int fail(const std::string &message) {
  errs() << "tfm-weights: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "tfm-weights: random weights for a model config\n");

  tfm::ParsedSpec parsed = tfm::loadModelSpec(configPath);
  if (!parsed.ok)
    return fail(parsed.error);
  const tfm::ModelSpec &spec = parsed.spec;

  std::string unsupported = tfm::llama2cUnsupportedReason(spec, configPath);
  if (!unsupported.empty())
    return fail(unsupported);

  std::error_code ec;
  raw_fd_ostream os(outputPath, ec, sys::fs::OF_None);
  if (ec)
    return fail(outputPath + ": cannot open for writing: " + ec.message());

  std::string error = tfm::writeLlama2c(spec, tfm::llamaWeightTensors(spec), seed, os);
  os.close();
  if (error.empty() && os.has_error())
    error = "write failed: " + os.error().message();
  if (!error.empty()) {
    os.clear_error(); // reported here; keep raw_fd_ostream from aborting
    sys::fs::remove(outputPath);
    return fail(outputPath + ": " + error);
  }
  return 0;
}
