//===- ReplayMain.cpp - Run a fuzz target over its regression corpus ------===//
//
// The normal build has no libFuzzer; this main feeds every file of the
// folders (or files) named on the command line to the target once, so each
// input that ever crashed it is replayed by the test suite.
//
//===----------------------------------------------------------------------===//
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    if (!llvm::sys::fs::is_directory(argv[i])) {
      inputs.push_back(argv[i]);
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(argv[i], ec), end; it != end && !ec;
         it.increment(ec))
      inputs.push_back(it->path());
  }
  for (const std::string &input : inputs) {
    auto buffer = llvm::MemoryBuffer::getFile(input, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << input << ": cannot read: " << buffer.getError().message() << "\n";
      return 1;
    }
    llvm::errs() << "replaying " << input << "\n";
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                           (*buffer)->getBufferSize());
  }
  llvm::outs() << "replayed " << inputs.size() << " inputs without a crash\n";
  return 0;
}
