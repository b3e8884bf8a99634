//===- Pooling.cpp - An encoder's hidden states as embeddings -------------===//
#include "tfm/runtime/Pooling.h"

#include <cmath>

using namespace tfm;
using namespace tfm::rt;

std::vector<float> tfm::rt::poolRows(const std::vector<float> &hidden, size_t rows, size_t width,
                                     Pooling pooling) {
  auto row = [&](size_t r) {
    return std::vector<float>(hidden.begin() + r * width, hidden.begin() + (r + 1) * width);
  };
  switch (pooling) {
  case Pooling::None:
    return hidden;
  case Pooling::Cls:
    return row(0);
  case Pooling::Last:
    return row(rows - 1);
  case Pooling::Mean:
    break;
  }
  // Summed in double: a mean over 512 rows keeps f32's precision.
  std::vector<double> sum(width, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < width; ++c)
      sum[c] += hidden[r * width + c];
  std::vector<float> mean(width);
  for (size_t c = 0; c < width; ++c)
    mean[c] = static_cast<float>(sum[c] / double(rows));
  return mean;
}

void tfm::rt::normalizeRows(std::vector<float> &rows, size_t width) {
  for (size_t start = 0; start + width <= rows.size(); start += width) {
    double norm = 0.0;
    for (size_t c = 0; c < width; ++c)
      norm += double(rows[start + c]) * rows[start + c];
    if (norm == 0.0)
      continue;
    double scale = 1.0 / std::sqrt(norm);
    for (size_t c = 0; c < width; ++c)
      rows[start + c] = static_cast<float>(rows[start + c] * scale);
  }
}
