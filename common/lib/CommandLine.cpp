//===- CommandLine.cpp - Command lines read as written, no @file ----------===//
#include "tfm/common/CommandLine.h"
#include "tfm/common/Version.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

namespace {

/// Whether `arg` is a registered option written without `=value` that
/// requires a value, so the next argument is its value.
bool takesNextArgument(llvm::StringRef arg) {
  if (!arg.starts_with("-") || arg == "-" || arg == "--" || arg.contains('='))
    return false;
  auto &options = cl::getRegisteredOptions();
  auto it = options.find(arg.ltrim('-'));
  return it != options.end() && it->second->getValueExpectedFlag() == cl::ValueRequired;
}

} // namespace

tfm::LiteralArguments::LiteralArguments(int argc, const char *const *argv) {
  bool positionalOnly = false; // after "--"
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (i > 0 && arg.starts_with("@")) {
      if (!positionalOnly && takesNextArgument(storage.back()))
        storage.back() += "=" + arg.str();
      else
        storage.push_back("./" + arg.str());
      continue;
    }
    positionalOnly |= i > 0 && arg == "--";
    storage.push_back(arg.str());
  }
  for (const std::string &s : storage)
    pointers.push_back(s.c_str());
  pointers.push_back(nullptr);
}

namespace {

/// LLVM Support registers options of its own (--color, --threads, ...),
/// which a tool hides (cl::HideUnrelatedOptions) but LLVM still accepts,
/// and ignores. A hidden option given is refused by name instead, as an
/// unknown one is.
void refuseHiddenOptions(llvm::StringRef argv0) {
  for (const auto &[name, option] : cl::getRegisteredOptions())
    if (option->getOptionHiddenFlag() == cl::ReallyHidden && option->getNumOccurrences() > 0) {
      llvm::StringRef tool = llvm::sys::path::filename(argv0);
      llvm::errs() << tool << ": error: --" << name << " is not an option of " << tool
                   << " (--help lists them)\n";
      std::exit(1);
    }
}

} // namespace

void tfm::parseCommandLine(int argc, const char *const *argv, llvm::StringRef overview) {
  // --version names this project's build, not the LLVM it links.
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << versionText() << "\n"; });
  LiteralArguments literal(argc, argv);
  cl::ParseCommandLineOptions(literal.argc(), literal.argv(), overview);
  refuseHiddenOptions(argc > 0 ? argv[0] : "tfm");
}

std::vector<std::string> tfm::splitCommaList(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> out;
  for (llvm::StringRef item : items)
    if (!item.trim().empty())
      out.push_back(item.trim().str());
  return out;
}

int tfm::finishStandardOutput(int status, llvm::StringRef tool) {
  llvm::outs().flush();
  if (!llvm::outs().has_error())
    return status;
  std::error_code error = llvm::outs().error();
  llvm::outs().clear_error();
  llvm::errs() << tool << ": error: cannot write standard output: " << error.message() << "\n";
  return 1;
}
