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

std::string tfm::boundedMessage(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  size_t quotedBytes = 0; // inside a double-quoted run: how many shown
  bool inQuote = false, cut = false;
  for (size_t i = 0; i < text.size() && out.size() < kBoundedMessageLimit; ++i) {
    unsigned char c = text[i];
    if (inQuote && c == '\\' && i + 1 < text.size()) { // an escape is one shown character
      if (!cut && ++quotedBytes > kQuotedTextLimit) {
        os << "...";
        cut = true;
      }
      if (!cut)
        os << text.substr(i, 2);
      ++i;
      continue;
    }
    if (c == '"') {
      inQuote = !inQuote;
      quotedBytes = 0;
      cut = false;
    } else if (inQuote && !cut && ++quotedBytes > kQuotedTextLimit) {
      os << "...";
      cut = true;
    }
    if (inQuote && cut)
      continue;
    if (c == '\n' || (c >= 0x20 && c < 0x7f))
      os << c;
    else
      os << "\\x" << llvm::format_hex_no_prefix(c, 2);
  }
  if (text.size() > 0 && out.size() >= kBoundedMessageLimit)
    os << "... (message cut)";
  return out;
}
