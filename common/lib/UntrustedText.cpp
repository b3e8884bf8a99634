//===- UntrustedText.cpp - Bytes from a file, made safe to show -----------===//
#include "tfm/common/UntrustedText.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

std::string tfm::quoted(llvm::StringRef text, size_t limit) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '"';
  // Multi-byte UTF-8 is escaped too: a cut can split a character, and
  // escaped bytes cannot reorder or hide the text around them (bidi marks).
  for (unsigned char c : text.take_front(limit)) {
    switch (c) {
    case '\n': os << "\\n"; break;
    case '\r': os << "\\r"; break;
    case '\t': os << "\\t"; break;
    case '"': os << "\\\""; break;
    case '\\': os << "\\\\"; break;
    default:
      if (c >= 0x20 && c < 0x7f)
        os << c;
      else
        os << "\\x" << llvm::format_hex_no_prefix(c, 2);
    }
  }
  os << '"';
  if (text.size() > limit)
    os << "... (" << text.size() << " bytes)";
  return out;
}
