//===- SafetensorsOutput.h - Weights as a Hugging Face folder ---*- C++ -*-===//
//
// Writes a model's tensors as Hugging Face's transformers would: under its
// module names, with GPT-2's Conv1D weights transposed to [in, out] and
// Llama's q/k rows in rotate-half order (tfm/common/TensorNames.h), as one
// model.safetensors or as shards model-0000i-of-0000N.safetensors with a
// model.safetensors.index.json.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_WEIGHTS_SAFETENSORSOUTPUT_H
#define TFM_WEIGHTS_SAFETENSORSOUTPUT_H

#include "tfm/common/ElementEncoding.h"
#include "WeightTensors.h"

#include <string>
#include <vector>

namespace tfm {

/// Writes `tensors` (manifest names and layouts) of a `spec` model into
/// folder `dir` in `shards` files. Returns "" or what went wrong; files
/// already written are removed on failure.
std::string writeSafetensorsFolder(const ModelSpec &spec, const std::vector<WeightTensor> &tensors,
                                   uint64_t seed, DType type, int64_t shards,
                                   const std::string &dir);

} // namespace tfm

#endif // TFM_WEIGHTS_SAFETENSORSOUTPUT_H
