//===- PromptText.cpp - The prompt, from -p, a file or standard input -----===//
#include "tfm/runtime/PromptText.h"

#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cstring>

#include <unistd.h>

using namespace tfm;
using namespace tfm::rt;

namespace {

/// The whole of standard input, refused past `limit` bytes.
llvm::Expected<std::string> readStandardInput(uint64_t limit) {
  std::string text;
  char chunk[65536];
  for (ssize_t n; (n = read(0, chunk, sizeof chunk)) != 0;) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return failure(std::string("-f -: reading standard input: ") + std::strerror(errno));
    }
    if (text.size() + size_t(n) > limit)
      return failure("-f -: standard input is longer than " + std::to_string(limit) +
                     " bytes, the most a prompt may be");
    text.append(chunk, size_t(n));
  }
  return text;
}

llvm::Expected<std::string> rawPromptText(const PromptSource &source, uint64_t limit) {
  if (source.file.empty())
    return source.text;
  if (source.textGiven)
    return failure("-p and -f both give a prompt; pass one");
  // /dev/stdin, which is not a regular file, is read as "-" is.
  if (source.file == "-" || source.file == "/dev/stdin")
    return readStandardInput(limit);
  auto buffer = readBoundedFile(source.file, limit, "prompt");
  if (!buffer)
    return buffer.takeError();
  return (*buffer)->getBuffer().str();
}

} // namespace

llvm::Expected<std::string> tfm::rt::promptText(const PromptSource &source, uint64_t limit) {
  llvm::Expected<std::string> text = rawPromptText(source, limit);
  if (!text || !source.escapes)
    return text;
  return processEscapes(*text);
}

std::string tfm::rt::processEscapes(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    char next = text[i + 1];
    const char *simple = nullptr;
    switch (next) {
    case 'n': simple = "\n"; break;
    case 'r': simple = "\r"; break;
    case 't': simple = "\t"; break;
    case '\\': simple = "\\"; break;
    case '\'': simple = "'"; break;
    case '"': simple = "\""; break;
    default: break;
    }
    if (simple) {
      out += simple;
      ++i;
    } else if (next == 'x' && i + 3 < text.size() && llvm::isHexDigit(text[i + 2]) &&
               llvm::isHexDigit(text[i + 3])) {
      out += static_cast<char>(llvm::hexFromNibbles(text[i + 2], text[i + 3]));
      i += 3;
    } else {
      out += text[i]; // not an escape: the backslash stays
    }
  }
  return out;
}
