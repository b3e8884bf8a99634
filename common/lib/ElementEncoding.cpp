//===- ElementEncoding.cpp - f32 values as a weight file stores them ------===//
#include "tfm/common/ElementEncoding.h"

#include "tfm/common/HalfFloat.h"

#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

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

void tfm::writeElements(const float *values, size_t n, const ElementEncoding &encoding,
                        llvm::raw_ostream &os) {
  if (encoding.block) {
    std::vector<uint8_t> blocks(blockRowBytes(*encoding.block, static_cast<int64_t>(n)));
    quantizeRow(*encoding.block, values, static_cast<int64_t>(n), blocks.data());
    os.write(reinterpret_cast<const char *>(blocks.data()), blocks.size());
    return;
  }
  if (encoding.plain == DType::F32) {
    os.write(reinterpret_cast<const char *>(values), n * sizeof(float));
    return;
  }
  std::vector<uint16_t> encoded(n);
  for (size_t i = 0; i < n; ++i)
    encoded[i] = encoding.plain == DType::F16 ? toHalf(values[i]) : toBfloat16(values[i]);
  os.write(reinterpret_cast<const char *>(encoded.data()), n * sizeof(uint16_t));
}
