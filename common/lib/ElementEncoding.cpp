//===- ElementEncoding.cpp - f32 values as a weight file stores them ------===//
#include "tfm/common/ElementEncoding.h"

#include "tfm/common/Failure.h"
#include "tfm/common/HalfFloat.h"

#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace tfm;

static_assert(llvm::sys::IsLittleEndianHost,
              "weight files are little-endian; add a byte swap for this host");

std::string ElementEncoding::name() const {
  return block ? blockLayout(*block).name : dtypeName(plain);
}

int64_t ElementEncoding::bytes(int64_t n) const {
  return block ? blockRowBytes(*block, n) : n * dtypeBytes(plain);
}

int64_t ElementEncoding::tensorBytes(const std::vector<int64_t> &shape) const {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    rows *= shape[i];
  return rows * bytes(shape.empty() ? 1 : shape.back());
}

int64_t ElementEncoding::blockElements() const {
  return block ? blockLayout(*block).blockElements : 1;
}

std::optional<ElementEncoding> tfm::parseElementEncoding(std::string_view name) {
  if (std::optional<BlockFormat> block = parseBlockFormat(name))
    return ElementEncoding{DType::F32, block};
  std::optional<DType> plain = parseDType(name);
  if (!plain || *plain == DType::I32)
    return std::nullopt;
  return ElementEncoding{*plain, std::nullopt};
}

void tfm::decodeElements(const ElementEncoding &encoding, const uint8_t *in, int64_t n,
                         float *out) {
  if (encoding.block) {
    dequantizeRow(*encoding.block, in, n, out);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (encoding.plain == DType::F32) {
      std::memcpy(&out[i], in + 4 * i, sizeof(float));
      continue;
    }
    uint16_t h;
    std::memcpy(&h, in + 2 * i, sizeof h);
    out[i] = encoding.plain == DType::F16 ? halfToFloat(h) : bfloat16ToFloat(h);
  }
}

std::vector<uint8_t> tfm::encodeElements(const float *values, size_t n,
                                         const ElementEncoding &encoding) {
  std::vector<uint8_t> bytes(static_cast<size_t>(encoding.bytes(static_cast<int64_t>(n))));
  if (encoding.block) {
    quantizeRow(*encoding.block, values, static_cast<int64_t>(n), bytes.data());
    return bytes;
  }
  if (encoding.plain == DType::F32) {
    std::memcpy(bytes.data(), values, n * sizeof(float));
    return bytes;
  }
  for (size_t i = 0; i < n; ++i) {
    uint16_t h = encoding.plain == DType::F16 ? toHalf(values[i]) : toBfloat16(values[i]);
    std::memcpy(bytes.data() + 2 * i, &h, sizeof h);
  }
  return bytes;
}

llvm::Expected<std::vector<uint8_t>> tfm::encodeFiniteElements(const float *values, size_t n,
                                                               const ElementEncoding &encoding) {
  auto refuse = [&](size_t i, const std::string &why) {
    // The shortest decimal that reads back as the value: 3.4e+38, nan.
    char value[32];
    for (int digits = 1; digits <= 9; ++digits) {
      std::snprintf(value, sizeof value, "%.*g", digits, static_cast<double>(values[i]));
      if (!std::isfinite(values[i]) || std::strtof(value, nullptr) == values[i])
        break;
    }
    return failure("element " + std::to_string(i) + " is " + value + ", " + why);
  };
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i]))
      return refuse(i, "expected a finite value");
  std::vector<uint8_t> bytes = encodeElements(values, n, encoding);
  // What the encoding holds, read back: a value past its range reads back
  // infinite (or, through a block's overflowed scale, NaN).
  std::vector<float> stored(n);
  decodeElements(encoding, bytes.data(), static_cast<int64_t>(n), stored.data());
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(stored[i]))
      continue;
    if (!encoding.block)
      return refuse(i, "which " + encoding.name() + " cannot hold");
    // The block's scale overflowed: its largest value is why.
    size_t block = static_cast<size_t>(encoding.blockElements());
    size_t first = i / block * block, largest = first;
    for (size_t j = first; j < first + block && j < n; ++j)
      if (std::fabs(values[j]) > std::fabs(values[largest]))
        largest = j;
    return refuse(largest, "which " + encoding.name() +
                               " cannot hold (its block's f16 scale overflows)");
  }
  return bytes;
}

void tfm::writeElements(const float *values, size_t n, const ElementEncoding &encoding,
                        llvm::raw_ostream &os) {
  std::vector<uint8_t> bytes = encodeElements(values, n, encoding);
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}
