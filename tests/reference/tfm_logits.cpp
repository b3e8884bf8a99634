//===- tfm_logits.cpp - Logits of a compiled model, for the reference tests -===//
//
// tfm-logits --model DIR --weights FILE --tokens 1,5,9,... --prefill P
//            --out F.npy [--threads N]
// Prefills tokens[0:P] in one call, then decodes the remaining tokens one at
// a time, and writes a float32 .npy of shape [1+K, vocab] (K = count - P):
// row 0 holds the logits after the prefill, row j those after decoding
// tokens[P+j-1]. With --prefill 0 it scores all tokens in one call instead
// (the entry point behind --logits and --perplexity), [count, vocab]. An
// encoder's library (BERT's) takes --prefill 0: it encodes all tokens in one
// call and writes their hidden states [count, hidden], or with --pooling
// mean|cls|last (and --normalize) the pooled row [1, hidden], as tfm-run
// --embeddings does. An encoder-decoder's (T5's) takes --source ids: it
// encodes them first, and --tokens are the decoder's. The reference tests
// compare them with an independent PyTorch forward pass.
//
//===----------------------------------------------------------------------===//
#include "tfm/common/CommandLine.h"
#include "tfm/common/Failure.h"
#include "tfm/runtime/ModelLibrary.h"
#include "tfm/runtime/NpyWriter.h"
#include "tfm/runtime/OptionNames.h"
#include "tfm/runtime/Pooling.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/WeightLoader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace tfm;
using namespace tfm::rt;
namespace cl = llvm::cl;

namespace {

llvm::Expected<std::vector<int32_t>> parseTokens(llvm::StringRef list) {
  std::vector<int32_t> tokens;
  llvm::SmallVector<llvm::StringRef> fields;
  list.split(fields, ',');
  for (llvm::StringRef field : fields) {
    int32_t id;
    if (field.trim().getAsInteger(10, id))
      return failure("--tokens: '" + field.str() +
                     "' is not a token id; expected comma-separated integers like 1,5,9");
    tokens.push_back(id);
  }
  return tokens;
}

/// An encoder's hidden states of every token, pooled as asked.
llvm::Error writeEncoded(Session &session, const std::vector<int32_t> &tokens, Pooling pooling,
                         bool normalize, const std::string &outPath) {
  llvm::Expected<std::vector<float>> hidden = session.encode(tokens);
  if (!hidden)
    return hidden.takeError();
  size_t width = static_cast<size_t>(session.hiddenSize());
  std::vector<float> rows = poolRows(*hidden, tokens.size(), width, pooling);
  if (normalize)
    normalizeRows(rows, width);
  return writeNpyF32(outPath, rows, rows.size() / width, width);
}

llvm::Error run(const std::string &modelDir, const std::string &weightsPath,
                const std::string &tokenList, int64_t prefillCount, const std::string &outPath,
                int threads, Pooling pooling, bool normalize, const std::string &sourceList) {
  if (threads < 1)
    return failure("--threads is " + std::to_string(threads) + ", expected at least 1");
  llvm::Expected<std::vector<int32_t>> tokens = parseTokens(tokenList);
  if (!tokens)
    return tokens.takeError();
  const int64_t count = static_cast<int64_t>(tokens->size());
  if (prefillCount < 0 || prefillCount > count)
    return failure("--prefill is " + std::to_string(prefillCount) + ", expected 0.." +
                   std::to_string(count) + " (the number of --tokens)");

  auto library = ModelLibrary::open(modelDir);
  if (!library)
    return library.takeError();
  const tfm_model &model = (*library)->model();
  if (count > static_cast<int64_t>(model.context_length))
    return failure("--tokens holds " + std::to_string(count) +
                   " tokens, more than the context of " + std::to_string(model.context_length));
  for (int32_t t : *tokens)
    if (t < 0 || t >= static_cast<int64_t>(model.vocab_size))
      return failure("--tokens: id " + std::to_string(t) + " is outside the vocabulary (0.." +
                     std::to_string(model.vocab_size - 1) + ")");
  llvm::Expected<BoundWeights> weights =
      bindWeights(weightsPath, (*library)->manifest(), LoadOptions{});
  if (!weights)
    return weights.takeError();

  if (model.set_num_threads)
    model.set_num_threads(threads);
  auto session = Session::create(model, weights->pointers);
  if (!session)
    return session.takeError();

  if ((*session)->hasSource() != !sourceList.empty())
    return failure((*session)->hasSource()
                       ? "an encoder-decoder decodes after a source: pass --source ids"
                       : "--source: the model has no encoder to read a source");
  if ((*session)->hasSource()) {
    llvm::Expected<std::vector<int32_t>> source = parseTokens(sourceList);
    if (!source)
      return source.takeError();
    if (llvm::Expected<std::vector<float>> encoded = (*session)->encode(*source); !encoded)
      return encoded.takeError();
  }
  if ((*session)->isEncoder()) {
    if (prefillCount != 0)
      return failure("--prefill is " + std::to_string(prefillCount) +
                     ", expected 0: an encoder takes the whole text in one call");
    return writeEncoded(**session, *tokens, pooling, normalize, outPath);
  }
  const size_t vocab = model.vocab_size;
  if (prefillCount == 0) {
    llvm::Expected<std::vector<float>> all = (*session)->score(*tokens);
    if (!all)
      return all.takeError();
    return writeNpyF32(outPath, *all, tokens->size(), vocab);
  }
  std::vector<float> rows;
  std::vector<int32_t> prompt(tokens->begin(), tokens->begin() + prefillCount);
  if (llvm::Error e = (*session)->prefill(prompt))
    return e;
  rows.insert(rows.end(), (*session)->logits(), (*session)->logits() + vocab);
  for (int64_t i = prefillCount; i < count; ++i) {
    if (llvm::Error e = (*session)->decode((*tokens)[i]))
      return e;
    rows.insert(rows.end(), (*session)->logits(), (*session)->logits() + vocab);
  }
  return writeNpyF32(outPath, rows, rows.size() / vocab, vocab);
}

} // namespace

int main(int argc, char **argv) {
  claimOptionName("threads");
  cl::OptionCategory category("tfm-logits options");
  cl::opt<std::string> modelDir("model", cl::desc("Model folder written by tfmc"),
                                cl::value_desc("dir"), cl::Required, cl::cat(category));
  cl::opt<std::string> weights("weights", cl::desc("Weights (safetensors, GGUF or llama2.c)"),
                               cl::value_desc("file"), cl::Required, cl::cat(category));
  cl::opt<std::string> tokenList("tokens", cl::desc("Comma-separated token ids"),
                                 cl::value_desc("ids"), cl::Required, cl::cat(category));
  cl::opt<int64_t> prefill("prefill", cl::desc("How many leading tokens go through prefill; 0 scores all in one call"),
                           cl::Required, cl::cat(category));
  cl::opt<std::string> out("out", cl::desc("Output .npy, float32 [1+K, vocab] ([count, vocab] with --prefill 0)"),
                           cl::value_desc("file"), cl::Required, cl::cat(category));
  cl::opt<int> threads("threads", cl::desc("Threads the kernels may use"), cl::init(1),
                       cl::cat(category));
  cl::opt<std::string> pooling("pooling",
                               cl::desc("An encoder's rows: none (every token), mean, cls or last"),
                               cl::init("none"), cl::cat(category));
  cl::opt<bool> normalize("normalize", cl::desc("An encoder's rows scaled to unit length"),
                          cl::cat(category));
  cl::opt<std::string> source("source",
                              cl::desc("An encoder-decoder's source ids, encoded first"),
                              cl::value_desc("ids"), cl::cat(category));
  cl::HideUnrelatedOptions(category);
  tfm::parseCommandLine(argc, argv, "tfm-logits: logits of a compiled model\n");

  std::optional<Pooling> pooled = parseVariant<Pooling>(pooling);
  if (!pooled) {
    llvm::errs() << "tfm-logits: error: --pooling: expected one of " << variantNameList<Pooling>()
                 << "\n";
    return 1;
  }
  if (llvm::Error e =
          run(modelDir, weights, tokenList, prefill, out, threads, *pooled, normalize, source)) {
    llvm::errs() << "tfm-logits: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}
