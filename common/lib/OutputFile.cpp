//===- OutputFile.cpp - Close an output stream and report its error -------===//
#include "tfm/common/OutputFile.h"

llvm::Error tfm::closeOutput(llvm::raw_fd_ostream &os, llvm::StringRef path) {
  os.close();
  if (!os.has_error())
    return llvm::Error::success();
  std::error_code error = os.error();
  os.clear_error();
  return llvm::createStringError(error, (path + ": write failed: " + error.message()).str());
}

llvm::Error tfm::writeTextFile(llvm::StringRef path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, (path + ": cannot write: " + ec.message()).str());
  os << text;
  return closeOutput(os, path);
}
