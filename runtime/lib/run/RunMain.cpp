//===- RunMain.cpp - tfm-run: find, compile, load, tokenize, run ----------===//
//
// The model comes from one of three places: linked into this executable
// (`tfmc --emit exe`), a folder tfmc wrote (--model), or a downloaded model
// (--model-dir: a Hugging Face folder or a .gguf), compiled on first use.
// Then one job: --tokenize, --logits, --perplexity, --embeddings (an
// encoder's), or generation.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/RunMain.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/CommandLine.h"
#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"
#include "tfm/common/UntrustedText.h"
#include "tfm/runtime/Conversation.h"
#include "tfm/runtime/Generator.h"
#include "tfm/runtime/LoadedModel.h"
#include "tfm/runtime/NpyWriter.h"
#include "tfm/runtime/OptionNames.h"
#include "tfm/runtime/Perplexity.h"
#include "tfm/runtime/Pooling.h"
#include "tfm/runtime/PromptText.h"
#include "tfm/runtime/TokenizerFactory.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/StringSaver.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <random>
#include <thread>

using namespace tfm;
using namespace tfm::rt;
namespace cl = llvm::cl;

namespace {

/// Prompt and --perplexity files are read whole; a FIFO or a device in
/// their place is refused rather than read until memory runs out.
constexpr uint64_t kMaxTextFileBytes = 1ull << 30;

/// Everything runMain reads from the command line.
struct RunOptions {
  std::string modelDir, modelSource, weights, tokenizer, prompt, promptFile;
  std::string target, schedule, activations, cacheDir;
  std::string logitsPath, perplexityPath, embeddingsPath;
  std::string source;       // --source: an encoder-decoder's input text
  bool sourceGiven = false;
  Pooling pooling = Pooling::None;
  bool normalize = false; // --normalize: embeddings of unit length
  bool promptGiven = false, fromBos = false, ids = false, ignoreEos = false, tokenize = false;
  bool interactive = false, color = false, escapes = false; // -i, --color, -e
  unsigned promptRepeats = 0; // how many -p
  WeightMemory weightMemory = WeightMemory::Mapped;
  int64_t maxNewTokens = -1; // -1: until the context is full
  int64_t contextSize = 0;   // -c: the context used, at most the compiled one; 0: that one
  int threads = 1;
  std::optional<int> device; // --device; none: the driver's first (or HL_GPU_DEVICE)
  SamplerOptions sampling;
  std::vector<std::string> stopStrings; // -r
};

/// An option's description with its default, "... (default 0.95)", kept
/// for the life of the process as the option's description must be.
llvm::StringRef withDefault(const std::string &text, double value) {
  static llvm::BumpPtrAllocator storage;
  static llvm::StringSaver saver(storage);
  std::string shown;
  llvm::raw_string_ostream(shown) << llvm::format("%g", value);
  return saver.save(text + " (default " + shown + ")");
}

/// A seed for a run that was given none: 64 bits from the system's entropy.
uint64_t randomSeed() {
  std::random_device device;
  return (uint64_t(device()) << 32) | device();
}

void printIds(const std::vector<int32_t> &ids) {
  llvm::json::Array array;
  for (int32_t id : ids)
    array.push_back(id);
  llvm::outs() << llvm::json::Value(std::move(array)) << "\n";
  llvm::outs().flush();
}

llvm::Error runPerplexity(const RunOptions &o, Session &session, const Tokenizer &tokenizer,
                          int64_t context) {
  auto text = readBoundedFile(o.perplexityPath, kMaxTextFileBytes, "text");
  if (!text)
    return text.takeError();
  int64_t chunk = context;
  std::vector<int32_t> tokens = tokenizer.encode((*text)->getBuffer().str(), tokenizer.addsBos());
  llvm::errs() << "perplexity: " << tokens.size() << " tokens of " << o.perplexityPath
               << ", " << tokens.size() / std::max<int64_t>(chunk, 1) << " chunks of " << chunk
               << "\n";
  llvm::Expected<PerplexityResult> result =
      perplexity(session, tokens, chunk, tokenizer.addsBos() ? tokenizer.bosId() : -1,
                 llvm::outs());
  if (!result)
    return result.takeError();
  llvm::outs() << "Final estimate: PPL = " << llvm::format("%.4f", result->perplexity)
               << " +/- " << llvm::format("%.5f", result->error) << " (" << result->chunks
               << " chunks, " << result->scoredTokens << " tokens scored)\n";
  return llvm::Error::success();
}

/// The tokens generation stops at: the tokenizer's EOS and end-of-turn
/// tokens (a GGUF's EOT, ...) and every id the config's eos_token_id lists
/// (none with --ignore-eos).
std::vector<int32_t> endTokens(const RunOptions &o, const Tokenizer &tokenizer,
                               const ModelSpec &config) {
  std::vector<int32_t> ids;
  if (o.ignoreEos)
    return ids;
  if (tokenizer.eosId() >= 0)
    ids.push_back(tokenizer.eosId());
  ids.insert(ids.end(), tokenizer.endOfTurnIds().begin(), tokenizer.endOfTurnIds().end());
  for (int64_t id : config.eosTokenIdList)
    if (id < tokenizer.vocabSize())
      ids.push_back(static_cast<int32_t>(id));
  return ids;
}

/// --embeddings: the prompt through an encoder, its hidden states pooled
/// (and normalised) into a float32 .npy [rows, hidden size].
llvm::Error writeEmbeddings(const RunOptions &o, Session &session,
                            const std::vector<int32_t> &promptIds) {
  llvm::Expected<std::vector<float>> hidden = session.encode(promptIds);
  if (!hidden)
    return hidden.takeError();
  size_t width = static_cast<size_t>(session.hiddenSize());
  std::vector<float> pooled = poolRows(*hidden, promptIds.size(), width, o.pooling);
  if (o.normalize)
    normalizeRows(pooled, width);
  size_t rows = pooled.size() / width;
  if (llvm::Error e = writeNpyF32(o.embeddingsPath, pooled, rows, width))
    return e;
  llvm::errs() << "wrote the " << variantName(o.pooling) << " embeddings of "
               << promptIds.size() << " tokens [" << rows << ", " << width << "]"
               << (o.normalize ? ", normalized," : "") << " to " << o.embeddingsPath << "\n";
  return llvm::Error::success();
}

/// Runs the job on a loaded model: --perplexity, --logits, --embeddings or
/// generation (whose speed line also gives `loadSeconds`, the time to bind
/// the weights). An encoder-decoder's source (`sourceIds`) is encoded first.
llvm::Error runJob(const RunOptions &o, Session &session, const Tokenizer &tokenizer,
                   const std::vector<int32_t> &promptIds, const ModelSpec &config,
                   int64_t context, double loadSeconds, const std::vector<int32_t> &sourceIds) {
  const int64_t promptTokens = static_cast<int64_t>(promptIds.size());
  if (!o.embeddingsPath.empty())
    return writeEmbeddings(o, session, promptIds);
  if (config.encoderDecoder())
    if (llvm::Expected<std::vector<float>> encoded = session.encode(sourceIds); !encoded)
      return encoded.takeError();
  if (!o.perplexityPath.empty())
    return runPerplexity(o, session, tokenizer, context);
  if (!o.logitsPath.empty()) {
    llvm::Expected<std::vector<float>> logits = session.score(promptIds);
    if (!logits)
      return logits.takeError();
    if (llvm::Error e = writeNpyF32(o.logitsPath, *logits, promptIds.size(), session.vocabSize()))
      return e;
    llvm::errs() << "wrote the logits of " << promptIds.size() << " prompt tokens ["
                 << promptIds.size() << ", " << session.vocabSize() << "] to " << o.logitsPath
                 << "\n";
    return llvm::Error::success();
  }

  // The last new token is never fed back, so it needs no position.
  int64_t maxNew = o.maxNewTokens >= 0 ? o.maxNewTokens : context - promptTokens + 1;
  if (maxNew > context - promptTokens + 1) // as promptTokens + maxNew - 1 > context, unoverflowed
    return failure("the prompt is " + std::to_string(promptTokens) + " tokens and -n asks for " +
                   std::to_string(maxNew) + " more: that needs " +
                   std::to_string(uint64_t(promptTokens) + uint64_t(maxNew) - 1) +
                   " positions, the context is " +
                   std::to_string(context) + " (at most -n " +
                   std::to_string(context - promptTokens + 1) + ")" + kLongerContext);
  // Random unless -s gives it, as llama.cpp's; said, so that a run can be
  // repeated with -s.
  if (o.sampling.temperature > 0)
    llvm::errs() << "seed: " << o.sampling.seed << " (-s " << o.sampling.seed
                 << " repeats this run)\n";
  llvm::Expected<Sampler> sampler = Sampler::create(o.sampling);
  if (!sampler)
    return sampler.takeError();
  GenerateOptions gen;
  gen.maxNewTokens = maxNew;
  gen.endTokenIds = endTokens(o, tokenizer, config);
  gen.stopStrings = o.stopStrings;
  gen.colorPrompt = o.color;
  // An encoder-decoder's decoder starts at its start token, not text.
  gen.echoPrompt = !(config.encoderDecoder() && promptIds.size() == 1);
  GenerationResult total;
  if (!promptIds.empty()) {
    llvm::Expected<GenerationResult> result =
        generate(session, tokenizer, *sampler, promptIds, gen, llvm::outs());
    if (!result)
      return result.takeError();
    total = std::move(*result);
  }
  if (o.interactive)
    if (llvm::Error e = converse(session, tokenizer, *sampler, gen,
                                 ConversationOptions{o.maxNewTokens, context, o.color}, total))
      return e;
  if (o.ids)
    printIds(total.ids);
  llvm::errs() << "load: " << llvm::format("%.2f", loadSeconds) << " s | "
               << formatSpeed(total) << "\n";
  return llvm::Error::success();
}

/// --tokenize with --tokenizer and no model, as llama-tokenize: the ids of
/// the prompt, with BOS as the tokenizer's files ask.
llvm::Error tokenizeWithoutModel(const RunOptions &o, const std::string &prompt) {
  if (o.tokenizer.empty())
    return failure("--tokenize without a model needs --tokenizer FILE (or a model: --model, "
                   "--model-dir)");
  auto tokenizer = loadStandaloneTokenizer(o.tokenizer);
  if (!tokenizer)
    return tokenizer.takeError();
  printIds((*tokenizer)->encode(prompt, (*tokenizer)->addsBos()));
  return llvm::Error::success();
}

/// An encoder's library encodes, a decoder's generates and scores: a job of
/// the other kind is refused by name, before the weights are read.
llvm::Error checkJobFitsModel(const RunOptions &o, const ModelSpec &config) {
  bool embeddings = !o.embeddingsPath.empty();
  if (o.sourceGiven && !config.encoderDecoder())
    return failure("--source: model " + config.name + " (" + variantName(config.family) +
                   ") has no encoder to read a source; --source is for an encoder-decoder "
                   "such as T5 (pass the text with -p)");
  if (config.encoderDecoder() && !o.sourceGiven && !o.tokenize)
    return failure("model " + config.name + " is an encoder-decoder (" +
                   variantName(config.family) + "): pass the text to transform with --source "
                   "TEXT (-p gives the decoder's first words, if any)");
  if (config.encoderDecoder() && (embeddings || !o.perplexityPath.empty()))
    return failure("model " + config.name + " is an encoder-decoder: it generates from "
                   "--source (or gives --logits), not " +
                   std::string(embeddings ? "--embeddings" : "--perplexity"));
  if (embeddings && !config.encoder())
    return failure("--embeddings: model " + config.name + " is a decoder (" +
                   variantName(config.family) +
                   "), which has no encode entry; embeddings come from an encoder such as "
                   "BERT (use --logits for a decoder's outputs)");
  if (!embeddings && !o.tokenize && config.encoder())
    return failure("model " + config.name + " is an encoder (" + variantName(config.family) +
                   "): it gives embeddings (--embeddings OUT.npy), not " +
                   (!o.logitsPath.empty()       ? "--logits"
                    : !o.perplexityPath.empty() ? "--perplexity"
                                                : "generated text"));
  return llvm::Error::success();
}

llvm::Error run(const RunOptions &o, const tfm_model *linked) {
  if (o.promptRepeats > 1)
    return failure("-p is given " + std::to_string(o.promptRepeats) +
                   " times; pass one prompt (or the text in a file with -f FILE)");
  if (o.contextSize < 0)
    return failure("-c/--ctx-size is " + std::to_string(o.contextSize) +
                   ", expected a number of positions (0: the compiled context)");
  int jobs = o.tokenize + !o.logitsPath.empty() + !o.perplexityPath.empty() +
             !o.embeddingsPath.empty();
  if (jobs > 1)
    return failure("--tokenize, --logits, --perplexity and --embeddings are separate jobs; "
                   "pass one");
  if (o.embeddingsPath.empty() && (o.pooling != Pooling::None || o.normalize))
    return failure("--pooling and --normalize shape --embeddings; pass --embeddings OUT.npy");
  bool needsPrompt = o.perplexityPath.empty();
  PromptSource source{o.prompt, o.promptGiven, o.promptFile, o.escapes};
  llvm::Expected<std::string> prompt = promptText(source, kMaxTextFileBytes);
  if (!prompt)
    return prompt.takeError();
  if (needsPrompt) {
    if (o.fromBos && !prompt->empty())
      return failure("--from-bos generates from BOS alone; it cannot be combined with a prompt");
    if (!o.fromBos && prompt->empty() && !o.interactive && !o.sourceGiven)
      return failure(std::string(o.promptGiven || !o.promptFile.empty() ? "empty prompt"
                                                                        : "no prompt") +
                     ": pass -p TEXT or -f FILE, or --from-bos to generate from BOS alone");
  }
  if (o.threads < 1)
    return failure("--threads is " + std::to_string(o.threads) + ", expected at least 1");
  if (o.device && *o.device < 0)
    return failure("--device is " + std::to_string(*o.device) + ", expected 0 or more");
  if (o.maxNewTokens < -1)
    return failure("-n is " + std::to_string(o.maxNewTokens) +
                   ", expected the number of tokens to generate (>= 0)");
  if (o.tokenize && o.modelDir.empty() && o.modelSource.empty() && !linked)
    return tokenizeWithoutModel(o, *prompt);

  ModelRequest request;
  request.model = o.modelDir;
  request.downloaded = o.modelSource;
  request.weights = o.weights;
  request.tokenizer = o.tokenizer;
  request.target = o.target;
  request.schedule = o.schedule;
  request.activations = o.activations;
  request.cacheDir = o.cacheDir;
  llvm::Expected<std::unique_ptr<LoadedModel>> loaded = LoadedModel::open(request, linked);
  if (!loaded)
    return loaded.takeError();
  LoadedModel &lm = **loaded;
  const int64_t compiledContext = lm.manifest().config.contextLength;
  if (llvm::Error e = checkJobFitsModel(o, lm.manifest().config))
    return e;
  if (o.contextSize > compiledContext)
    return failure("-c/--ctx-size is " + std::to_string(o.contextSize) +
                   ", more than the context of " + std::to_string(compiledContext) +
                   " the model was compiled for" + kLongerContext);
  const int64_t context = o.contextSize > 0 ? o.contextSize : compiledContext;

  const Tokenizer &tokenizer = lm.tokenizer();
  const ModelSpec &config = lm.manifest().config;
  std::vector<int32_t> promptIds, sourceIds;
  if (config.encoderDecoder()) {
    // The source ends with EOS, as T5's and Marian's tokenizers end it
    // (and llama.cpp's T5 vocabulary); the decoder starts from its start
    // token, then the prompt's text if any.
    sourceIds = tokenizer.encode(o.source, tokenizer.addsBos());
    if (sourceIds.empty() || sourceIds.back() != config.eosTokenId)
      sourceIds.push_back(static_cast<int32_t>(config.eosTokenId));
    int64_t most = lm.library().model().prefill_chunk;
    if (static_cast<int64_t>(sourceIds.size()) > most)
      return failure("--source is " + std::to_string(sourceIds.size()) +
                     " tokens, longer than the " + std::to_string(most) +
                     " source tokens the model was compiled for (tfmc --context N compiles "
                     "another maximum)");
    promptIds = {static_cast<int32_t>(config.decoderStartTokenId)};
    std::vector<int32_t> prefix = tokenizer.encode(*prompt, false);
    promptIds.insert(promptIds.end(), prefix.begin(), prefix.end());
  } else if (o.fromBos) {
    if (tokenizer.bosId() < 0)
      return failure(lm.tokenizerPath() + ": the tokenizer has no BOS token; pass a prompt");
    promptIds = {tokenizer.bosId()};
  } else if (needsPrompt && !(o.interactive && prompt->empty())) {
    // -i with no prompt waits for the user's first line.
    promptIds = tokenizer.encode(*prompt, tokenizer.addsBos());
  }
  if (o.tokenize) {
    printIds(config.encoderDecoder() && o.sourceGiven ? sourceIds : promptIds);
    return llvm::Error::success();
  }
  const int64_t promptTokens = static_cast<int64_t>(promptIds.size());
  if (promptTokens > context)
    return failure("the prompt is " + std::to_string(promptTokens) +
                   " tokens, longer than the context of " + std::to_string(context) +
                   kLongerContext);

  for (const std::string &output : {o.logitsPath, o.embeddingsPath})
    if (!output.empty() && !lm.weightsPath().empty()) {
      std::vector<std::string> inputs = weightFilesOf(lm.weightsPath());
      inputs.insert(inputs.end(), {lm.tokenizerPath(), o.promptFile, lm.library().source()});
      if (llvm::Error e = refuseInputAsOutput(output, inputs))
        return e;
    }
  auto loadStart = std::chrono::steady_clock::now();
  if (llvm::Error e = lm.bind(RunSettings{o.weightMemory, o.threads, o.device}))
    return e;
  auto session = lm.newSession();
  if (!session)
    return session.takeError();
  double loadSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - loadStart).count();
  return lm.explain(
      runJob(o, **session, tokenizer, promptIds, config, context, loadSeconds, sourceIds));
}

} // namespace

int tfm::rt::runMain(int argc, char **argv, const tfm_model *linked) {
  claimOptionName("threads");
  claimOptionName("color"); // LLVM Support's, for its own diagnostics
  cl::OptionCategory modelCategory("Model");
  cl::OptionCategory jobCategory("What to do (default: generate text)");
  cl::OptionCategory samplingCategory("Generation");
  cl::opt<std::string> modelDir(
      "model",
      cl::desc("The model (-m): a folder tfmc wrote, or what --model-dir takes (a .gguf file "
               "or a Hugging Face folder)"),
      cl::value_desc("path"), cl::cat(modelCategory));
  cl::alias modelShort("m", cl::desc("--model, as llama.cpp's -m"), cl::aliasopt(modelDir),
                       cl::cat(modelCategory));
  cl::opt<std::string> modelSource(
      "model-dir",
      cl::desc("A Hugging Face model folder or a .gguf file; compiled on first use and cached"),
      cl::value_desc("path"), cl::cat(modelCategory));
  cl::opt<std::string> weights(
      "weights",
      cl::desc("Weights: .safetensors, model.safetensors.index.json, .gguf or llama2.c .bin "
               "(default: the model's own: a GGUF, a Hugging Face folder's, or the file its "
               "library records)"),
      cl::value_desc("file"), cl::cat(modelCategory));
  cl::opt<std::string> tokenizer(
      "tokenizer",
      cl::desc("tokenizer.json, vocab.json (+merges.txt), tokenizer.model, encoder.json "
               "(+vocab.bpe), llama2.c tokenizer.bin or a .gguf (default: the model's own: a GGUF's, "
               "a Hugging Face folder's, or the file its library records)"),
      cl::value_desc("file"), cl::cat(modelCategory));
  cl::opt<std::string> target("target", cl::desc("With --model-dir: tfmc --target (default host)"),
                              cl::init("host"), cl::cat(modelCategory));
  cl::opt<std::string> schedule(
      "schedule", cl::desc("With --model-dir: tfmc --schedule (default: tfmc's per-kernel table)"),
      cl::cat(modelCategory));
  cl::opt<std::string> activations(
      "activations",
      cl::desc("With --model-dir: tfmc --activations f32|int8|bf16 (default f32: exact; int8 "
               "for block-format weights and bf16 for bf16 weights round the products' inputs, "
               "for faster dot products)"),
      cl::cat(modelCategory));
  cl::opt<std::string> cacheDir("cache-dir",
                                cl::desc("Where --model-dir keeps compiled models (default: "
                                         "$TFM_CACHE_DIR, else ~/.cache/tfmc)"),
                                cl::value_desc("dir"), cl::cat(modelCategory));
  cl::opt<bool> noMmap(
      "no-mmap",
      cl::desc("Read the weights into memory of tfm-run's own, in huge pages where granted, "
               "instead of mapping the file (as llama.cpp's --no-mmap)"),
      cl::cat(modelCategory));
  cl::opt<int> threads("threads", cl::desc(withDefault("Threads the kernels may use (-t); all this machine's cores",
                                    std::max(1u, std::thread::hardware_concurrency()))),
                       cl::init(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
                       cl::cat(modelCategory));
  cl::alias threadsShort("t", cl::desc("--threads, as llama.cpp's -t"), cl::aliasopt(threads),
                         cl::cat(modelCategory));
  cl::opt<int> device("device",
                      cl::desc("A GPU library's device: 0, 1, ... in its driver's order "
                               "(default: the first, or Halide's HL_GPU_DEVICE)"),
                      cl::init(-1), cl::value_desc("n"), cl::cat(modelCategory));

  cl::opt<bool> tokenize("tokenize", cl::desc("Print the prompt's token ids as a JSON array and exit"),
                         cl::cat(jobCategory));
  cl::opt<std::string> logits(
      "logits", cl::desc("Write the logits of every prompt position, float32 .npy [tokens, vocab]"),
      cl::value_desc("file"), cl::cat(jobCategory));
  cl::opt<std::string> perplexityFile(
      "perplexity",
      cl::desc("Perplexity of a text file in chunks of the context size, scoring the second "
               "half of each (as llama-perplexity)"),
      cl::value_desc("file"), cl::cat(jobCategory));
  cl::opt<std::string> sourceText(
      "source",
      cl::desc("An encoder-decoder's (T5's) input text: encoded once, then the decoder "
               "generates from its start token (-p: the decoder's first words)"),
      cl::value_desc("text"), cl::cat(jobCategory));
  cl::opt<std::string> embeddings(
      "embeddings",
      cl::desc("An encoder's (BERT's) embeddings of the prompt, float32 .npy [tokens or 1, "
               "hidden size]"),
      cl::value_desc("file"), cl::cat(jobCategory));
  cl::opt<std::string> pooling(
      "pooling",
      cl::desc("--embeddings of every token (none, the default), their mean, the first "
               "token's (cls) or the last token's"),
      cl::value_desc("none|mean|cls|last"), cl::init("none"), cl::cat(jobCategory));
  cl::opt<bool> normalize("normalize",
                          cl::desc("--embeddings scaled to unit length (L2), as "
                                   "sentence-transformers and llama-embedding give them"),
                          cl::cat(jobCategory));
  cl::opt<int64_t> contextSize(
      "c",
      cl::desc("Context size (--ctx-size), at most the one compiled (the default); "
               "--perplexity's chunk size"),
      cl::init(0), cl::cat(jobCategory));
  cl::alias ctxSize("ctx-size", cl::desc("-c, as llama.cpp's --ctx-size"),
                    cl::aliasopt(contextSize), cl::cat(jobCategory));

  cl::opt<std::string> prompt("p", cl::desc("Prompt text"), cl::value_desc("text"),
                              cl::cat(samplingCategory));
  cl::opt<std::string> promptFile("f", cl::desc("Read the prompt from a file"),
                                  cl::value_desc("file"), cl::cat(samplingCategory));
  cl::opt<bool> escapes("escape",
                        cl::desc("Read \\n, \\t, \\\\, \\', \\\" and \\xHH in the prompt as the "
                                 "characters they stand for (-e, as llama.cpp's)"),
                        cl::cat(samplingCategory));
  cl::alias escapesShort("e", cl::desc("--escape"), cl::aliasopt(escapes),
                         cl::cat(samplingCategory));
  cl::opt<bool> fromBos("from-bos", cl::desc("Generate from BOS alone, with no prompt"),
                        cl::cat(samplingCategory));
  cl::opt<int64_t> steps("n", cl::desc("Tokens to generate (default: until the context is full)"),
                         cl::init(-1), cl::cat(samplingCategory));
  const SamplerOptions defaults = defaultSamplerOptions();
  cl::opt<float> temperature("temp", cl::desc(withDefault("Sampling temperature; 0 is greedy", defaults.temperature)),
                             cl::init(defaults.temperature), cl::cat(samplingCategory));
  cl::opt<int64_t> topK("top-k", cl::desc(withDefault("Keep the k most probable tokens; 0 keeps all", defaults.topK)),
                        cl::init(defaults.topK), cl::cat(samplingCategory));
  cl::opt<float> topP("top-p", cl::desc(withDefault("Keep the smallest set with this much probability; 1 keeps all", defaults.topP)),
                      cl::init(defaults.topP), cl::cat(samplingCategory));
  cl::opt<float> minP("min-p", cl::desc(withDefault("Drop tokens below this fraction of the most probable one", defaults.minP)),
                      cl::init(defaults.minP), cl::cat(samplingCategory));
  cl::opt<float> repeatPenalty(
      "repeat-penalty",
      cl::desc(withDefault("Divide the logits of the recent tokens by this (multiply the "
                           "negative ones), as llama.cpp's; 1 is none",
                           defaults.repeatPenalty)),
      cl::init(defaults.repeatPenalty), cl::cat(samplingCategory));
  cl::opt<int64_t> repeatLastN("repeat-last-n",
                               cl::desc(withDefault("How many recent tokens --repeat-penalty "
                                                    "sees, the prompt's included; 0 is none",
                                                    defaults.repeatLastN)),
                               cl::init(defaults.repeatLastN), cl::cat(samplingCategory));
  cl::list<std::string> reversePrompts(
      "reverse-prompt",
      cl::desc("Stop once the generated text ends with this (-r; repeatable), as llama.cpp's"),
      cl::value_desc("text"), cl::cat(samplingCategory));
  cl::alias reversePromptShort("r", cl::desc("--reverse-prompt"), cl::aliasopt(reversePrompts),
                               cl::cat(samplingCategory));
  cl::opt<uint64_t> seed(
      "seed",
      cl::desc("Sampling seed (-s; default: a random one, printed); the same seed gives the "
               "same tokens"),
      cl::cat(samplingCategory));
  cl::alias seedShort("s", cl::desc("--seed, as llama.cpp's -s"), cl::aliasopt(seed),
                      cl::cat(samplingCategory));
  cl::opt<bool> printIdsAtEnd("ids", cl::desc("At the end, print every token id as one JSON array line"),
                              cl::cat(samplingCategory));
  cl::opt<bool> interactive(
      "interactive",
      cl::desc("After the prompt's text, answer each line typed on standard input, in one "
               "sequence, until the input ends or the context is full (-i, as llama.cpp's)"),
      cl::cat(samplingCategory));
  cl::alias interactiveShort("i", cl::desc("--interactive"), cl::aliasopt(interactive),
                             cl::cat(samplingCategory));
  cl::opt<bool> color("color",
                      cl::desc("Print the prompt and what is typed in green, the model's text "
                               "plain (ANSI colours, as llama.cpp's --color)"),
                      cl::cat(samplingCategory));
  cl::opt<bool> ignoreEos("ignore-eos", cl::desc("Do not stop at the end-of-sequence token"),
                          cl::cat(samplingCategory));
  // A model linked in (tfmc --emit exe) is the model: the options that
  // name or compile another are refused, so --help leaves them out.
  if (linked)
    for (cl::Option *option : std::initializer_list<cl::Option *>{
             &modelDir, &modelShort, &modelSource, &target, &schedule, &activations, &cacheDir})
      option->setHiddenFlag(cl::ReallyHidden);
  cl::HideUnrelatedOptions({&modelCategory, &jobCategory, &samplingCategory});
  tfm::parseCommandLine(argc, argv, "tfm-run: run a tfmc-compiled model\n");

  RunOptions o;
  o.modelDir = modelDir;
  o.modelSource = modelSource;
  o.weights = weights;
  o.tokenizer = tokenizer;
  o.target = target;
  o.schedule = schedule;
  o.activations = activations;
  o.cacheDir = cacheDir;
  o.prompt = prompt;
  o.promptFile = promptFile;
  o.promptGiven = prompt.getNumOccurrences() > 0;
  o.fromBos = fromBos;
  o.ids = printIdsAtEnd;
  o.ignoreEos = ignoreEos;
  o.interactive = interactive;
  o.escapes = escapes;
  o.color = color;
  o.tokenize = tokenize;
  o.logitsPath = logits;
  o.perplexityPath = perplexityFile;
  o.embeddingsPath = embeddings;
  o.source = sourceText;
  o.sourceGiven = sourceText.getNumOccurrences() > 0;
  o.normalize = normalize;
  o.contextSize = contextSize;
  o.maxNewTokens = steps;
  o.threads = threads;
  if (device.getNumOccurrences())
    o.device = device;
  o.weightMemory = noMmap ? WeightMemory::Resident : WeightMemory::Mapped;
  o.sampling.temperature = temperature;
  o.sampling.topK = topK;
  o.sampling.topP = topP;
  o.sampling.minP = minP;
  o.sampling.repeatPenalty = repeatPenalty;
  o.sampling.repeatLastN = repeatLastN;
  o.stopStrings.assign(reversePrompts.begin(), reversePrompts.end());
  o.sampling.seed = seed.getNumOccurrences() ? uint64_t(seed) : randomSeed();
  o.promptRepeats = prompt.getNumOccurrences();

  llvm::StringRef tool = llvm::sys::path::filename(argv[0]);
  std::optional<Pooling> pooled = parseVariant<Pooling>(pooling);
  if (!pooled) {
    llvm::errs() << tool << ": error: --pooling: found " << quoted(pooling)
                 << ", expected one of " << variantNameList<Pooling>() << "\n";
    return 1;
  }
  o.pooling = *pooled;
  if (llvm::Error e = run(o, linked)) {
    llvm::outs().flush();
    llvm::errs() << tool << ": error: " << llvm::toString(std::move(e)) << "\n";
    return finishStandardOutput(1, tool);
  }
  return finishStandardOutput(0, tool);
}
