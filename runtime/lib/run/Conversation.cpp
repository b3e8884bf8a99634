//===- Conversation.cpp - tfm-run -i: a turn per line typed ---------------===//
#include "tfm/runtime/Conversation.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdio>
#include <optional>

using namespace tfm::rt;

namespace {

/// A typed line is cut here (and the rest read as the next turns): the
/// context holds far fewer tokens, and input is not read until memory
/// runs out.
constexpr size_t kMaxTurnBytes = 1 << 20;

/// A line the user types after "> ", with its newline; none at the end of
/// the input.
std::optional<std::string> readTurn(bool color) {
  llvm::outs() << "\n> " << (color ? kPromptColor : "");
  llvm::outs().flush();
  std::string line;
  for (int c; (c = std::getchar()) != EOF;) {
    line += static_cast<char>(c);
    if (c == '\n' || line.size() == kMaxTurnBytes)
      break;
  }
  if (color)
    llvm::outs() << kResetColor;
  if (line.empty())
    return std::nullopt;
  return line;
}

void addTimes(GenerationResult &total, const GenerationResult &turn) {
  total.prefillTokens += turn.prefillTokens;
  total.prefillSeconds += turn.prefillSeconds;
  total.decodeCalls += turn.decodeCalls;
  total.decodeSeconds += turn.decodeSeconds;
}

} // namespace

llvm::Error tfm::rt::converse(Session &session, const Tokenizer &tokenizer, Sampler &sampler,
                              GenerateOptions generation, const ConversationOptions &options,
                              GenerationResult &total) {
  generation.echoPrompt = false; // the terminal has shown what the user typed
  for (std::optional<std::string> line; (line = readTurn(options.color));) {
    std::vector<int32_t> turn;
    // The last token of an answer was never fed back; an EOS ends the
    // answer, not the conversation, and is not fed.
    if (session.position() < int64_t(total.ids.size()) &&
        !llvm::is_contained(generation.endTokenIds, total.ids.back()))
      turn.push_back(total.ids.back());
    std::vector<int32_t> typed =
        tokenizer.encode(*line, /*addBos=*/total.ids.empty() && tokenizer.addsBos());
    turn.insert(turn.end(), typed.begin(), typed.end());
    if (turn.empty())
      continue;
    int64_t room = options.context - session.position() - int64_t(turn.size()) + 1;
    if (room < 1) {
      llvm::errs() << "\ntfm-run: the context of " << options.context << " positions is full\n";
      break;
    }
    generation.maxNewTokens =
        options.maxNewTokens >= 0 ? std::min(options.maxNewTokens, room) : room;
    llvm::Expected<GenerationResult> answer =
        generate(session, tokenizer, sampler, turn, generation, llvm::outs());
    if (!answer)
      return answer.takeError();
    size_t refed = turn.size() - typed.size(); // already in total.ids
    total.ids.insert(total.ids.end(), answer->ids.begin() + refed, answer->ids.end());
    addTimes(total, *answer);
  }
  llvm::outs() << "\n";
  return llvm::Error::success();
}
