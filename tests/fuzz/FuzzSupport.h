//===- FuzzSupport.h - What every fuzz target shares ------------*- C++ -*-===//
//
// The loaders read paths (they map files), so each input is written to a
// file whose name selects the format, in a folder private to the process.
// Weight loaders are checked against the manifest of a tiny model of each
// family, built from the one tensor-name table as tfmc's would be.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_FUZZ_FUZZSUPPORT_H
#define TFM_FUZZ_FUZZSUPPORT_H

#include "tfm/common/Manifest.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace tfm::fuzz {

/// Writes `data` to `name` (which may hold one folder level, e.g.
/// "m/tokenizer.json") in this process's scratch folder; returns its path.
std::string writeInput(llvm::StringRef name, const uint8_t *data, size_t size);

/// The manifest of a two-layer model of `family` ("llama" or "gpt2") with
/// 8-wide embeddings, 2 heads and a 16-token vocabulary.
const Manifest &tinyManifest(llvm::StringRef family);

/// A folder of real tokenizer files ($TFM_SHARED_DIR/models), or "" (the
/// reason printed) when it is missing.
std::string sharedModelsDir();

/// Consumes a refusal, checking the promise every message keeps: bounded,
/// and no raw control bytes from the file (only newlines). Returns 0, the
/// value LLVMFuzzerTestOneInput returns.
int checkMessage(llvm::Error error);

/// Loads the tokenizer file at `path` without a model; a refusal goes to
/// checkMessage, a tokenizer encodes `text` and decodes every id, which must
/// index its vocabulary.
void loadAndUseTokenizer(const std::string &path, const std::string &text);

/// Stops the process with a message: a property the target checks failed.
[[noreturn]] void propertyFailed(const std::string &message);

} // namespace tfm::fuzz

#endif // TFM_FUZZ_FUZZSUPPORT_H
