//===- CommandLine.h - Command lines read as written, no @file -*- C++ -*-===//
//
// llvm::cl::ParseCommandLineOptions expands every argument that starts with
// '@' as a response file, unconditionally. For our tools that turns user
// text into arguments: `-p "@notes.txt"` reads notes.txt as options (a
// prompt holding `x --weights=/other` swaps the weights) and
// `-p "@user hello"` fails. No tool of the project expands response files,
// so every tool parses its command line through here.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_COMMON_COMMANDLINE_H
#define TFM_COMMON_COMMANDLINE_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tfm {

/// argv rewritten so that no argument starts with '@' and each means what
/// it meant: a value after an option that requires one is joined to it
/// (`-p @x` becomes `-p=@x`); any other '@' argument is a path of a
/// positional input and becomes `./@x`. Build it after the options are
/// registered: joining asks the registry which options take values.
class LiteralArguments {
public:
  LiteralArguments(int argc, const char *const *argv);
  int argc() const { return static_cast<int>(pointers.size()) - 1; }
  const char **argv() { return pointers.data(); }

private:
  std::vector<std::string> storage;
  std::vector<const char *> pointers; // null-terminated, as argv
};

/// cl::ParseCommandLineOptions on LiteralArguments; exits on a bad option
/// as ParseCommandLineOptions does.
void parseCommandLine(int argc, const char *const *argv, llvm::StringRef overview);

/// A tool's exit status once its standard output is flushed: `status`, or
/// 1 with "<tool>: error: cannot write standard output: <reason>" when the
/// output failed (a full disk, /dev/full, a closed pipe), where LLVM would
/// otherwise abort at exit with "LLVM ERROR: IO failure on output stream".
int finishStandardOutput(int status, llvm::StringRef tool);

/// An option's list "a, b,c": its items trimmed, empty ones dropped.
std::vector<std::string> splitCommaList(llvm::StringRef text);

} // namespace tfm

#endif // TFM_COMMON_COMMANDLINE_H
