//===- ChildProcess.h - Run another of the project's tools -------*- C++ -*-===//
//
// tfmc --tune runs tfm-weights and tfm-bench, and tfm-bench runs tfmc and
// itself, each in a child process whose output may go to files.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_CHILDPROCESS_H
#define TFM_COMMON_CHILDPROCESS_H

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tfm {

/// Runs `args` (args[0] the program) to its end, its standard output and
/// error to the files named (none: this process's own). A failure says the
/// exit status and, when standard error went to a file, names it and quotes
/// its lines that say "error:": the tool's own messages, not the rest of
/// what it logged (the profiler's reports, progress).
llvm::Error runProgram(const std::vector<std::string> &args,
                       const std::optional<std::string> &outFile,
                       const std::optional<std::string> &errFile);

} // namespace tfm

#endif // TFM_COMMON_CHILDPROCESS_H
