//===- IrFile.cpp - Read an untrusted .mlir file within limits ------------===//
#include "tfm/Lowering/IrFile.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"

#include <string>

llvm::Error tfm::checkNestingDepth(llvm::StringRef text, llvm::StringRef path, unsigned limit) {
  unsigned depth = 0;
  size_t line = 1, column = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    } else if (c == '"') { // a string: up to its unescaped closing quote
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        line += text[i] == '\n';
        if (text[i] == '\\')
          ++i;
      }
    } else if (c == '/' && text.substr(i).starts_with("//")) { // a comment: to the line's end
      i = text.find('\n', i) - 1; // npos - 1 ends the loop
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return failure(
            (path + ":" + std::to_string(line) + ":" + std::to_string(column) +
             ": brackets nested " + std::to_string(depth) + " deep, expected at most " +
             std::to_string(limit))
                .str());
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-') &&
                (i + 1 == text.size() || text[i + 1] != '='))) {
      if (depth > 0)
        --depth;
    }
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> tfm::readIrFile(llvm::StringRef path) {
  auto text = readBoundedFile(path, kMaxIrFileBytes, "tfm IR");
  if (!text)
    return text.takeError();
  if (llvm::Error e = checkNestingDepth((*text)->getBuffer(), path))
    return std::move(e);
  // Copied with a terminating NUL, which MLIR's lexer reads up to (a
  // mapped file of a page's exact size has none).
  return llvm::MemoryBuffer::getMemBufferCopy((*text)->getBuffer(), path);
}
