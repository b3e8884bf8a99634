//===- Conversation.h - tfm-run -i: a turn per line typed -------*- C++ -*-===//
#ifndef TFM_RUNTIME_CONVERSATION_H
#define TFM_RUNTIME_CONVERSATION_H

#include "tfm/runtime/Generator.h"

#include "llvm/Support/Error.h"

namespace tfm::rt {

struct ConversationOptions {
  int64_t maxNewTokens = -1; // per answer; -1: until the context is full
  int64_t context = 0;       // positions the sequence may use
  bool color = false;        // what the user types, in kPromptColor
};

/// After "> " on standard output, each line read from standard input (with
/// its newline, as llama.cpp's -i reads it) continues `session` and the
/// model answers it, until the input ends or the context is full.
/// `generation` says how each answer is sampled and stops; `total`, which
/// holds what came before (the prompt's ids and answer), gathers every id
/// and time.
llvm::Error converse(Session &session, const Tokenizer &tokenizer, Sampler &sampler,
                     GenerateOptions generation, const ConversationOptions &options,
                     GenerationResult &total);

} // namespace tfm::rt

#endif // TFM_RUNTIME_CONVERSATION_H
