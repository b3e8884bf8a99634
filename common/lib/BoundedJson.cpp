//===- BoundedJson.cpp - JSON from files, parsed within limits ------------===//
#include "tfm/common/BoundedJson.h"
#include "tfm/common/Failure.h"

namespace {

/// The deepest bracket nesting in `text`, and where it first passes `limit`
/// (brackets inside strings do not count; malformed JSON is left to the
/// parser, which reports it with a line and column).
struct Nesting {
  size_t depth = 0;
  size_t offset = 0;
};

Nesting firstNestingPast(llvm::StringRef text, size_t limit) {
  size_t depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return {depth, i};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

} // namespace

llvm::Expected<llvm::json::Value> tfm::parseBoundedJson(llvm::StringRef text,
                                                        llvm::StringRef source,
                                                        size_t maxDepth) {
  Nesting past = firstNestingPast(text, maxDepth);
  if (past.depth)
    return failure(source + ": JSON nested more than " + llvm::Twine(maxDepth) +
                   " levels deep (at byte " + llvm::Twine(past.offset) +
                   "); no file of this kind nests that deep, so it is refused before parsing");
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return failure(source + ": not valid JSON: " + llvm::toString(value.takeError()));
  return value;
}

llvm::Expected<llvm::json::Object> tfm::parseBoundedJsonObject(llvm::StringRef text,
                                                               llvm::StringRef source) {
  llvm::Expected<llvm::json::Value> parsed = parseBoundedJson(text, source);
  if (!parsed)
    return parsed.takeError();
  llvm::json::Object *obj = parsed->getAsObject();
  if (!obj)
    return failure(source + ": expected a JSON object at the top level");
  return std::move(*obj);
}
