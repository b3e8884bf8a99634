//===- RunMain.cpp - tfm-run: load, bind, tokenize, generate --------------===//
#include "tfm/runtime/RunMain.h"

#include "tfm/runtime/Generator.h"
#include "tfm/runtime/Llama2cCheckpoint.h"
#include "tfm/runtime/Llama2cTokenizer.h"
#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/OptionNames.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>

using namespace tfm::rt;
namespace cl = llvm::cl;

namespace {

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Everything runMain reads from the command line.
struct RunOptions {
  std::string modelDir, weights, tokenizer, prompt;
  bool promptGiven = false, fromBos = false, ids = false, ignoreEos = false;
  int64_t maxNewTokens = -1; // -1: until the context is full
  int threads = 1;
  SamplerOptions sampling;
};

llvm::Error run(const RunOptions &o, const tfm_model *linked) {
  if (linked && !o.modelDir.empty())
    return failure(std::string("this executable has model '") +
                   (linked->name ? linked->name : "?") +
                   "' linked in; --model is not accepted");
  if (!linked && o.modelDir.empty())
    return failure("--model DIR is required (the output folder of tfmc)");
  if (o.fromBos && !o.prompt.empty())
    return failure("--from-bos generates from BOS alone; it cannot be combined with a prompt (-p)");
  if (!o.fromBos && o.prompt.empty())
    return failure(std::string(o.promptGiven ? "empty prompt (-p \"\")" : "no prompt") +
                   ": pass -p TEXT, or --from-bos to generate from BOS alone");
  if (o.threads < 1)
    return failure("--threads is " + std::to_string(o.threads) + ", expected at least 1");
  if (o.maxNewTokens < -1)
    return failure("-n is " + std::to_string(o.maxNewTokens) +
                   ", expected the number of tokens to generate (>= 0)");

  auto library = linked ? ModelLibrary::fromLinked(linked) : ModelLibrary::open(o.modelDir);
  if (!library)
    return library.takeError();
  const tfm_model &model = (*library)->model();
  const tfm::ModelSpec &config = (*library)->manifest().config;

  llvm::Expected<BoundWeights> weights =
      bindLlama2cCheckpoint(o.weights, (*library)->manifest());
  if (!weights)
    return weights.takeError();
  auto tokenizer = Llama2cTokenizer::load(o.tokenizer, config.vocabSize);
  if (!tokenizer)
    return tokenizer.takeError();
  llvm::Expected<Sampler> sampler = Sampler::create(o.sampling);
  if (!sampler)
    return sampler.takeError();

  std::vector<int32_t> prompt = (*tokenizer)->encode(o.prompt, /*addBos=*/true);
  const int64_t context = config.contextLength;
  const int64_t promptTokens = static_cast<int64_t>(prompt.size());
  if (promptTokens > context)
    return failure("the prompt is " + std::to_string(promptTokens) +
                   " tokens (BOS included), longer than the context of " +
                   std::to_string(context));
  // The last new token is never fed back, so it needs no position.
  int64_t maxNew = o.maxNewTokens >= 0 ? o.maxNewTokens : context - promptTokens + 1;
  if (promptTokens + maxNew - 1 > context)
    return failure("the prompt is " + std::to_string(promptTokens) +
                   " tokens (BOS included) and -n asks for " + std::to_string(maxNew) +
                   " more: that needs " + std::to_string(promptTokens + maxNew - 1) +
                   " positions, the context is " + std::to_string(context) +
                   " (at most -n " + std::to_string(context - promptTokens + 1) + ")");

  if (model.set_num_threads)
    model.set_num_threads(o.threads);
  auto session = Session::create(model, weights->pointers);
  if (!session)
    return session.takeError();

  GenerateOptions gen;
  gen.maxNewTokens = maxNew;
  gen.stopAtEos = !o.ignoreEos;
  gen.eosTokenId = static_cast<int32_t>(config.eosTokenId);
  llvm::Expected<GenerationResult> result =
      generate(**session, **tokenizer, *sampler, prompt, gen, llvm::outs());
  if (!result)
    return result.takeError();

  if (o.ids) {
    llvm::json::Array ids;
    for (int32_t id : result->ids)
      ids.push_back(id);
    llvm::outs() << llvm::json::Value(std::move(ids)) << "\n";
    llvm::outs().flush();
  }
  llvm::errs() << formatSpeed(*result) << "\n";
  return llvm::Error::success();
}

} // namespace

int tfm::rt::runMain(int argc, char **argv, const tfm_model *linked) {
  claimOptionName("threads");
  cl::OptionCategory category("tfm-run options");
  cl::opt<std::string> modelDir("model", cl::desc("Model folder written by tfmc"),
                                cl::value_desc("dir"), cl::cat(category));
  cl::opt<std::string> weights("weights", cl::desc("llama2.c checkpoint (.bin)"),
                               cl::value_desc("file"), cl::Required, cl::cat(category));
  cl::opt<std::string> tokenizer("tokenizer", cl::desc("llama2.c tokenizer.bin"),
                                 cl::value_desc("file"), cl::Required, cl::cat(category));
  cl::opt<std::string> prompt("p", cl::desc("Prompt text"), cl::value_desc("text"),
                              cl::cat(category));
  cl::opt<bool> fromBos("from-bos", cl::desc("Generate from BOS alone, with no prompt"),
                        cl::cat(category));
  cl::opt<int64_t> steps("n", cl::desc("Tokens to generate (default: until the context is full)"),
                         cl::init(-1), cl::cat(category));
  cl::opt<float> temperature("temp", cl::desc("Sampling temperature; 0 is greedy"),
                             cl::init(0.8f), cl::cat(category));
  cl::opt<int64_t> topK("top-k", cl::desc("Keep the k most probable tokens; 0 keeps all"),
                        cl::init(0), cl::cat(category));
  cl::opt<float> topP("top-p", cl::desc("Keep the smallest set with this much probability; 1 keeps all"),
                      cl::init(0.95f), cl::cat(category));
  cl::opt<float> minP("min-p", cl::desc("Drop tokens below this fraction of the most probable one"),
                      cl::init(0.0f), cl::cat(category));
  cl::opt<uint64_t> seed("seed", cl::desc("Sampling seed; the same seed gives the same tokens"),
                         cl::init(42), cl::cat(category));
  cl::opt<int> threads("threads", cl::desc("Threads the kernels may use"),
                       cl::init(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
                       cl::cat(category));
  cl::opt<bool> printIds("ids", cl::desc("At the end, print every token id as one JSON array line"),
                         cl::cat(category));
  cl::opt<bool> ignoreEos("ignore-eos", cl::desc("Do not stop at the end-of-sequence token"),
                          cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "tfm-run: generate text with a tfmc-compiled model\n");

  RunOptions o;
  o.modelDir = modelDir;
  o.weights = weights;
  o.tokenizer = tokenizer;
  o.prompt = prompt;
  o.promptGiven = prompt.getNumOccurrences() > 0;
  o.fromBos = fromBos;
  o.ids = printIds;
  o.ignoreEos = ignoreEos;
  o.maxNewTokens = steps;
  o.threads = threads;
  o.sampling.temperature = temperature;
  o.sampling.topK = topK;
  o.sampling.topP = topP;
  o.sampling.minP = minP;
  o.sampling.seed = seed;

  if (llvm::Error e = run(o, linked)) {
    llvm::outs().flush();
    llvm::errs() << llvm::sys::path::filename(argv[0]) << ": error: "
                 << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}
