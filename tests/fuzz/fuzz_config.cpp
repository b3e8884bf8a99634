//===- fuzz_config.cpp - config.json through ModelSpec ----------------------===//
//
// Any bytes as a config.json. What parses must survive the trip the IR
// makes: canonical JSON written into tfm.config and read back identically.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "tfm/common/ModelSpec.h"

using namespace tfm;

extern "C" int LLVMFuzzerInitialize(int *, char ***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<ModelSpec> spec = parseModelSpec(text, "config.json");
  if (!spec)
    return fuzz::checkMessage(spec.takeError());
  std::string canonical = spec->canonicalJson();
  llvm::Expected<ModelSpec> again = parseCanonicalSpec(canonical, "tfm.config", "");
  if (!again)
    fuzz::propertyFailed("the canonical form of an accepted config is refused: " +
                         llvm::toString(again.takeError()));
  if (again->canonicalJson() != canonical)
    fuzz::propertyFailed("the canonical form does not read back the same: " + canonical);
  return 0;
}
