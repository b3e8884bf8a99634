//===- OptionNames.h - Take option names libLLVM already uses ---*- C++ -*-===//
#ifndef TFM_RUNTIME_OPTIONNAMES_H
#define TFM_RUNTIME_OPTIONNAMES_H

#include "llvm/ADT/StringRef.h"

namespace tfm::rt {

/// The shared libLLVM registers global options of its own (an undocumented
/// -threads among them); declaring ours under the same name would abort
/// with "registered more than once". This renames such an option to
/// "llvm-<name>" so that `name` is free for the tool.
void claimOptionName(llvm::StringRef name);

} // namespace tfm::rt

#endif // TFM_RUNTIME_OPTIONNAMES_H
