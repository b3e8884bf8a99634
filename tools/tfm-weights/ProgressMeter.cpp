//===- ProgressMeter.cpp --------------------------------------------------===//
#include "ProgressMeter.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace tfm;

ProgressMeter::ProgressMeter(uint64_t totalBytes)
    : total(totalBytes), enabled(llvm::sys::Process::StandardErrIsDisplayed()) {}

ProgressMeter::~ProgressMeter() {
  if (enabled && lastShownMiB != ~0ull)
    llvm::errs() << "\n";
}

void ProgressMeter::advance(uint64_t bytes) {
  done += bytes;
  uint64_t doneMiB = done >> 20;
  if (!enabled || doneMiB == lastShownMiB)
    return;
  lastShownMiB = doneMiB;
  llvm::errs() << "\rwritten " << doneMiB << " / " << (total >> 20) << " MiB";
  llvm::errs().flush();
}
