//===- RandomValues.cpp - splitmix64 streams per tensor --------------------===//
#include "RandomValues.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace tfm;

namespace {

uint64_t fnv1a(const std::string &text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace

TensorValueStream::TensorValueStream(const WeightTensor &tensor, uint64_t seed)
    : init(tensor.init), bound(static_cast<float>(tensor.bound)),
      state(seed ^ fnv1a(tensor.name)) {}

uint64_t TensorValueStream::nextBits() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

float TensorValueStream::centeredUniform() {
  return static_cast<float>(nextBits() >> 40) * (1.0f / 16777216.0f) - 0.5f;
}

void TensorValueStream::next(float *out, size_t n) {
  switch (init) {
  case InitKind::UnitNormal: {
    // Irwin-Hall: the sum of four centred uniforms has variance 1/3, close
    // enough to a Gaussian for test weights and free of libm differences.
    const float toUnitVariance = std::sqrt(3.0f);
    for (size_t i = 0; i < n; ++i) {
      float sum = centeredUniform() + centeredUniform() + centeredUniform() +
                  centeredUniform();
      out[i] = sum * toUnitVariance;
    }
    return;
  }
  case InitKind::Uniform:
    for (size_t i = 0; i < n; ++i)
      out[i] = 2.0f * bound * centeredUniform();
    return;
  case InitKind::NormGain:
    for (size_t i = 0; i < n; ++i)
      out[i] = 1.0f + 0.2f * centeredUniform();
    return;
  }
}

void tfm::streamRandomTensor(const WeightTensor &tensor, uint64_t seed,
                             const ElementEncoding &encoding, llvm::raw_ostream &os,
                             rt::Progress &progress) {
  // Whole rows, so that a block format's blocks never straddle two chunks.
  const int64_t row = tensor.shape.empty() ? 1 : tensor.shape.back();
  const int64_t chunkElements = std::max<int64_t>(1, (int64_t(1) << 20) / row) * row;
  TensorValueStream values(tensor, seed);
  std::vector<float> chunk(static_cast<size_t>(std::min(chunkElements, tensor.numElements())));
  for (int64_t left = tensor.numElements(); left > 0;) {
    size_t n = static_cast<size_t>(std::min(left, chunkElements));
    values.next(chunk.data(), n);
    writeElements(chunk.data(), n, encoding, os);
    progress.advance(encoding.bytes(static_cast<int64_t>(n)));
    left -= static_cast<int64_t>(n);
  }
}

std::vector<float> tfm::randomTensorValues(const WeightTensor &tensor, uint64_t seed) {
  std::vector<float> out(tensor.numElements());
  TensorValueStream(tensor, seed).next(out.data(), out.size());
  return out;
}
