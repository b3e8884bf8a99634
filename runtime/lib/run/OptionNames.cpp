//===- OptionNames.cpp - Take option names libLLVM already uses -----------===//
#include "tfm/runtime/OptionNames.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"

void tfm::rt::claimOptionName(llvm::StringRef name) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end())
    return;
  // Option names are StringRefs that must outlive the option: keep the new
  // name for the life of the process.
  static llvm::BumpPtrAllocator storage;
  static llvm::StringSaver saver(storage);
  it->second->setArgStr(saver.save("llvm-" + name));
}
