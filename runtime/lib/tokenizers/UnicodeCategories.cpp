//===- UnicodeCategories.cpp - UTF-8 characters classified by ICU ---------===//
#include "tfm/runtime/UnicodeCategories.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/ErrorHandling.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

using namespace tfm::rt;

CharClass tfm::rt::classifyCodepoint(char32_t codepoint) {
  UChar32 c = static_cast<UChar32>(codepoint);
  uint32_t category = U_GET_GC_MASK(c);
  if (category & U_GC_L_MASK)
    return CharClass::Letter;
  if (category & U_GC_N_MASK)
    return CharClass::Number;
  if (u_isUWhiteSpace(c))
    return CharClass::Whitespace;
  return CharClass::Other;
}

bool tfm::rt::isPunctuation(char32_t codepoint) {
  return (U_GET_GC_MASK(static_cast<UChar32>(codepoint)) & U_GC_P_MASK) != 0;
}

bool tfm::rt::isOtherCategory(char32_t codepoint) {
  return (U_GET_GC_MASK(static_cast<UChar32>(codepoint)) & U_GC_C_MASK) != 0;
}

bool tfm::rt::isNonspacingMark(char32_t codepoint) {
  return (U_GET_GC_MASK(static_cast<UChar32>(codepoint)) & U_GC_MN_MASK) != 0;
}

std::string tfm::rt::lowercaseCharacter(char32_t codepoint) {
  icu::UnicodeString text(static_cast<UChar32>(codepoint));
  std::string out;
  text.toLower(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

std::vector<TextChar> tfm::rt::splitCharacters(llvm::StringRef text) {
  std::vector<TextChar> chars;
  chars.reserve(text.size());
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data());
  const llvm::UTF8 *end = begin + text.size();
  for (const llvm::UTF8 *at = begin; at < end;) {
    TextChar ch;
    ch.offset = static_cast<uint32_t>(at - begin);
    const llvm::UTF8 *next = at;
    llvm::UTF32 codepoint = 0;
    if (llvm::convertUTF8Sequence(&next, end, &codepoint, llvm::strictConversion) ==
        llvm::conversionOK) {
      ch.size = static_cast<uint32_t>(next - at);
      ch.codepoint = codepoint;
      ch.valid = true;
      ch.cls = classifyCodepoint(codepoint);
    } else {
      ch.size = 1;
    }
    at += ch.size;
    chars.push_back(ch);
  }
  return chars;
}

namespace {

/// The size of the whitespace character that spans exactly `bytes`, or 0.
size_t whitespaceSize(llvm::StringRef bytes) {
  const auto *at = reinterpret_cast<const llvm::UTF8 *>(bytes.data());
  const llvm::UTF8 *start = at;
  llvm::UTF32 codepoint = 0;
  if (llvm::convertUTF8Sequence(&at, start + bytes.size(), &codepoint,
                                llvm::strictConversion) != llvm::conversionOK ||
      classifyCodepoint(codepoint) != CharClass::Whitespace)
    return 0;
  return static_cast<size_t>(at - start);
}

} // namespace

size_t tfm::rt::leadingWhitespace(llvm::StringRef text) {
  size_t at = 0;
  while (size_t size = whitespaceSize(text.drop_front(at)))
    at += size;
  return at;
}

size_t tfm::rt::trailingWhitespace(llvm::StringRef text) {
  size_t end = text.size();
  for (;;) {
    // A character ends here if one of the last 1..4 bytes starts it.
    size_t size = 0;
    for (size_t n = 1; n <= 4 && n <= end && !size; ++n)
      if (whitespaceSize(text.slice(end - n, end)) == n)
        size = n;
    if (!size)
      return text.size() - end;
    end -= size;
  }
}

std::string tfm::rt::normalizeText(llvm::StringRef text, Normalization form) {
  if (form == Normalization::None)
    return text.str();
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2 *normalizer = nullptr;
  switch (form) {
  case Normalization::NFC:
    normalizer = icu::Normalizer2::getNFCInstance(status);
    break;
  case Normalization::NFD:
    normalizer = icu::Normalizer2::getNFDInstance(status);
    break;
  case Normalization::NFKC:
    normalizer = icu::Normalizer2::getNFKCInstance(status);
    break;
  case Normalization::NFKD:
    normalizer = icu::Normalizer2::getNFKDInstance(status);
    break;
  case Normalization::None:
    break;
  }
  // ICU's data is linked in; failing to find it is a broken installation.
  if (U_FAILURE(status) || !normalizer)
    llvm::report_fatal_error("ICU has no Unicode normalization data");

  std::string out;
  out.reserve(text.size());
  std::vector<TextChar> chars = splitCharacters(text);
  for (size_t i = 0; i < chars.size();) {
    size_t j = i;
    while (j < chars.size() && chars[j].valid == chars[i].valid)
      ++j;
    size_t from = chars[i].offset;
    size_t to = j < chars.size() ? chars[j].offset : text.size();
    llvm::StringRef run = text.slice(from, to);
    if (chars[i].valid) {
      icu::UnicodeString normalized = normalizer->normalize(
          icu::UnicodeString::fromUTF8(icu::StringPiece(run.data(), run.size())), status);
      normalized.toUTF8String(out);
    } else {
      out += run.str();
    }
    i = j;
  }
  return out;
}
