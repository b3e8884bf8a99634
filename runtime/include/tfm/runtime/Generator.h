//===- Generator.h - Prompt in, streamed text out ---------------*- C++ -*-===//
#ifndef TFM_RUNTIME_GENERATOR_H
#define TFM_RUNTIME_GENERATOR_H

#include "tfm/runtime/Sampler.h"
#include "tfm/runtime/Session.h"
#include "tfm/runtime/Tokenizer.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tfm::rt {

struct GenerateOptions {
  int64_t maxNewTokens = 0;
  /// Generation stops at any of these, which it does not print (the
  /// tokenizer's EOS and the config's list; none with --ignore-eos).
  std::vector<int32_t> endTokenIds;
  /// Generation stops once the new text ends with one of these (llama.cpp's
  /// -r/--reverse-prompt); the text is printed whole.
  std::vector<std::string> stopStrings;
  /// Whether the prompt's text is printed first (not for a turn the user
  /// typed, tfm-run -i), and in colour (--color: llama.cpp's, the
  /// terminal's green, so that what the model wrote stands apart).
  bool echoPrompt = true;
  bool colorPrompt = false;
};

/// The ANSI codes --color wraps the user's text in.
inline constexpr const char *kPromptColor = "\x1b[32m";
inline constexpr const char *kResetColor = "\x1b[0m";

struct GenerationResult {
  std::vector<int32_t> ids; // the prompt (with BOS if it has one), then every generated token
  int64_t prefillTokens = 0;
  double prefillSeconds = 0;
  int64_t decodeCalls = 0; // the first new token comes from prefill's logits
  double decodeSeconds = 0;
};

/// Prefills `prompt` (BOS first, when the tokenizer adds one) in one call,
/// then samples up to maxNewTokens, feeding each back through decode except
/// the last, or until the new text ends with a stop string. The prompt's
/// tokens are accepted by the sampler (its repeat penalty sees them). Text
/// (the prompt's, then each new token's) goes to `out` as it is produced,
/// flushed per token, ending with a newline. An EOS token, when stopping at
/// it, is recorded in the ids but not printed.
llvm::Expected<GenerationResult> generate(Session &session, const Tokenizer &tokenizer,
                                          Sampler &sampler,
                                          const std::vector<int32_t> &prompt,
                                          const GenerateOptions &options,
                                          llvm::raw_ostream &out);

/// "prefill: 7 tokens, 812.3 tok/s | decode: 199 tokens, 61.2 tok/s"
std::string formatSpeed(const GenerationResult &result);

} // namespace tfm::rt

#endif // TFM_RUNTIME_GENERATOR_H
