//===- ChildProcess.cpp - Run another of the project's tools --------------===//
#include "tfm/common/ChildProcess.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Program.h"

namespace {

/// A tool's log is read for its error lines only; past this it is cut.
constexpr uint64_t kMaxLogBytes = 64ull << 20;

} // namespace

llvm::Error tfm::runProgram(const std::vector<std::string> &args,
                            const std::optional<std::string> &outFile,
                            const std::optional<std::string> &errFile) {
  std::vector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt, std::nullopt};
  if (outFile)
    redirects[1] = llvm::StringRef(*outFile);
  if (errFile)
    redirects[2] = llvm::StringRef(*errFile);
  std::string error;
  int status = llvm::sys::ExecuteAndWait(args[0], argv, std::nullopt, redirects, 0, 0, &error);
  if (status == 0)
    return llvm::Error::success();
  std::string message = llvm::join(argv, " ") + ": " +
                        (error.empty() ? "exit status " + std::to_string(status) : error);
  if (errFile) {
    message += " (log: " + *errFile + ")";
    if (auto buffer = readBoundedFile(*errFile, kMaxLogBytes, "log")) {
      llvm::SmallVector<llvm::StringRef> lines;
      (*buffer)->getBuffer().split(lines, '\n');
      for (llvm::StringRef line : lines)
        if (line.contains_insensitive("error"))
          message += "\n  " + line.str();
    } else {
      llvm::consumeError(buffer.takeError());
    }
  }
  return failure(message);
}
