//===- SafetensorsWriter.cpp - Write a .safetensors file ------------------===//
#include "tfm/runtime/SafetensorsWriter.h"

#include "tfm/runtime/SafetensorsFile.h"

#include "TensorData.h"

#include "llvm/Support/JSON.h"

#include <cassert>
#include <cstring>

namespace json = llvm::json;
using namespace tfm::rt;

void SafetensorsWriter::addTensor(llvm::StringRef name, llvm::StringRef dtype,
                                  llvm::ArrayRef<int64_t> shape) {
  int64_t bytes = safetensorsDtypeBytes(dtype);
  assert(bytes && "not a safetensors dtype");
  for (int64_t d : shape)
    bytes *= d;
  tensors.push_back({name.str(), dtype.str(), shape.vec(), bytes});
}

llvm::Error SafetensorsWriter::write(
    llvm::raw_ostream &os,
    llvm::function_ref<llvm::Error(size_t, llvm::raw_ostream &)> writeData) const {
  json::Object header{{"__metadata__", json::Object{{"format", "pt"}}}};
  int64_t offset = 0;
  for (const Tensor &t : tensors) {
    json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    header[t.name] = json::Object{{"dtype", t.dtype},
                                  {"shape", std::move(shape)},
                                  {"data_offsets", json::Array{offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text;
  llvm::raw_string_ostream(text) << json::Value(std::move(header));
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t length = text.size();
  char lengthBytes[8];
  std::memcpy(lengthBytes, &length, 8);
  os.write(lengthBytes, 8);
  os << text;
  return writeTensorData(os, llvm::ArrayRef(tensors), writeData);
}
