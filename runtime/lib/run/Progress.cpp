//===- Progress.cpp - "label 45%" on a terminal, silence elsewhere --------===//
#include "tfm/runtime/Progress.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tfm::rt;

Progress::Progress(std::string label, uint64_t total)
    : label(std::move(label)), total(total),
      enabled(total > 0 && llvm::sys::Process::StandardErrIsDisplayed()) {}

Progress::~Progress() {
  if (enabled && shownPercent >= 0)
    llvm::errs() << "\n";
}

void Progress::advance(uint64_t units) {
  done += units;
  if (!enabled)
    return;
  int percent = static_cast<int>(std::min<uint64_t>(done, total) * 100 / total);
  if (percent == shownPercent)
    return;
  shownPercent = percent;
  llvm::errs() << "\r" << label << " " << percent << "%";
  llvm::errs().flush();
}
