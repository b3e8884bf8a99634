//===- NpyWriter.cpp - float32 matrices as NumPy .npy files ---------------===//
#include "tfm/runtime/NpyWriter.h"

#include "tfm/common/Failure.h"
#include "tfm/common/OutputFile.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>

using namespace tfm;
using namespace tfm::rt;

llvm::Error tfm::rt::writeNpyF32(const std::string &path, const std::vector<float> &data,
                                 size_t rows, size_t cols) {
  if (data.size() != rows * cols)
    return failure(path + ": " + std::to_string(data.size()) +
                                       " values do not fill shape [" + std::to_string(rows) +
                                       ", " + std::to_string(cols) + "]");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  llvm::Expected<AtomicOutputFile> file = AtomicOutputFile::create(path);
  if (!file)
    return file.takeError();
  llvm::raw_ostream &out = file->os();
  out << "\x93NUMPY" << '\x01' << '\x00';
  uint16_t length = static_cast<uint16_t>(header.size());
  out << static_cast<char>(length & 0xff) << static_cast<char>(length >> 8) << header;
  out.write(reinterpret_cast<const char *>(data.data()), data.size() * sizeof(float));
  return file->commit();
}
