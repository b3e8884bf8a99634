//===- BoundedFile.cpp - Read a small file a user names, within limits ----===//
#include "tfm/common/BoundedFile.h"

#include "llvm/Support/FileSystem.h"

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
tfm::readBoundedFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   (path + ": cannot read the " + what + ": " + message).str());
  };
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return fail(ec.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return fail("not a regular file");
  if (status.getSize() > maxBytes)
    return fail("it is " + llvm::Twine(status.getSize()) + " bytes, expected at most " +
                llvm::Twine(maxBytes) + " for a " + what + " file");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(buffer.getError().message());
  return std::move(*buffer);
}
