//===- GgufOutput.h - Weights as a GGUF v3 file -----------------*- C++ -*-===//
//
// Tensors under their manifest (llama.cpp) names and layouts, and the
// metadata llama.cpp writes for the architecture (general.architecture,
// "<arch>.embedding_length", "<arch>.block_count", ...), so the file also
// describes its own model.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_GGUFOUTPUT_H
#define TFM_WEIGHTS_GGUFOUTPUT_H

#include "ElementEncoding.h"
#include "WeightTensors.h"

#include <string>
#include <vector>

namespace tfm {

/// Writes `tensors` of a `spec` model to `path`. Returns "" or what went
/// wrong; the partial file is removed on failure.
std::string writeGgufFile(const ModelSpec &spec, const std::vector<WeightTensor> &tensors,
                          uint64_t seed, ElementType type, const std::string &path);

} // namespace tfm

#endif // TFM_WEIGHTS_GGUFOUTPUT_H
