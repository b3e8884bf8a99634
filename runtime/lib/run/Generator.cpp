//===- Generator.cpp - Prefill, sample, decode, stream --------------------===//
#include "tfm/runtime/Generator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <chrono>

using namespace tfm::rt;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool endsWithStopString(const std::string &text, const std::vector<std::string> &stops) {
  for (const std::string &stop : stops)
    if (!stop.empty() && text.size() >= stop.size() &&
        text.compare(text.size() - stop.size(), stop.size(), stop) == 0)
      return true;
  return false;
}

} // namespace

llvm::Expected<GenerationResult>
tfm::rt::generate(Session &session, const Tokenizer &tokenizer, Sampler &sampler,
                  const std::vector<int32_t> &prompt, const GenerateOptions &options,
                  llvm::raw_ostream &out) {
  GenerationResult result;
  result.ids = prompt;
  // A leading BOS marks the start; it is not part of the text.
  size_t first = !prompt.empty() && prompt[0] == tokenizer.bosId() ? 1 : 0;
  if (options.echoPrompt) {
    if (options.colorPrompt)
      out << kPromptColor;
    for (size_t i = first; i < prompt.size(); ++i)
      out << tokenizer.decode(i > 0 ? prompt[i - 1] : -1, prompt[i]);
    if (options.colorPrompt)
      out << kResetColor;
    out.flush();
  }
  // The prompt's tokens count as recent for the repeat penalty, as in
  // llama.cpp.
  for (int32_t token : prompt)
    sampler.accept(token);

  auto start = std::chrono::steady_clock::now();
  if (llvm::Error e = session.prefill(prompt))
    return std::move(e);
  result.prefillSeconds = secondsSince(start);
  result.prefillTokens = static_cast<int64_t>(prompt.size());

  std::string generated; // the new tokens' text, for the stop strings
  for (int64_t produced = 0; produced < options.maxNewTokens; ++produced) {
    int32_t next = sampler.sample(session.logits(), session.vocabSize());
    int32_t previous = result.ids.back();
    result.ids.push_back(next);
    if (llvm::is_contained(options.endTokenIds, next))
      break;
    std::string piece = tokenizer.decode(previous, next);
    out << piece;
    out.flush();
    generated += piece;
    if (endsWithStopString(generated, options.stopStrings))
      break;
    if (produced + 1 == options.maxNewTokens)
      break; // the last token is never fed back
    start = std::chrono::steady_clock::now();
    if (llvm::Error e = session.decode(next))
      return std::move(e);
    result.decodeSeconds += secondsSince(start);
    ++result.decodeCalls;
  }
  out << "\n";
  out.flush();
  return result;
}

std::string tfm::rt::formatSpeed(const GenerationResult &r) {
  auto rate = [](int64_t tokens, double seconds) {
    return seconds > 0 ? tokens / seconds : 0.0;
  };
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "prefill: " << r.prefillTokens << " tokens, "
     << llvm::format("%.1f", rate(r.prefillTokens, r.prefillSeconds))
     << " tok/s | decode: " << r.decodeCalls << " tokens, "
     << llvm::format("%.1f", rate(r.decodeCalls, r.decodeSeconds)) << " tok/s";
  return s;
}
