//===- DType.cpp - Element types of tensors -------------------------------===//
#include "tfm/common/DType.h"

using namespace tfm;

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  int64_t bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4}, {DType::F16, "f16", 2}, {DType::BF16, "bf16", 2}, {DType::I32, "i32", 4}};

const DTypeInfo &info(DType type) { return kDTypes[static_cast<int>(type)]; }
} // namespace

const char *tfm::dtypeName(DType type) { return info(type).name; }

int64_t tfm::dtypeBytes(DType type) { return info(type).bytes; }

std::optional<DType> tfm::parseDType(std::string_view name) {
  for (const DTypeInfo &d : kDTypes)
    if (name == d.name)
      return d.type;
  return std::nullopt;
}
