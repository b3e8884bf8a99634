//===- WeightFileBytes.cpp - Map a weight file, or read it into huge pages ===//
#include "tfm/runtime/WeightFileBytes.h"

#include "tfm/runtime/HugePages.h"
#include "tfm/common/BoundedFile.h"
#include "tfm/common/Failure.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfm::rt;

using tfm::failure;

namespace {

/// The file's bytes copied into a fresh buffer, aligned to and advised into
/// huge pages before its first write faults them in.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readIntoHugePages(const std::string &path,
                                                                      const std::string &kind) {
  llvm::Expected<tfm::RegularFile> file = tfm::openRegularFile(path, kind);
  if (!file)
    return file.takeError();
  const int fd = file->fd();
  const uint64_t size = file->size();
  std::unique_ptr<llvm::WritableMemoryBuffer> buffer =
      llvm::WritableMemoryBuffer::getNewUninitMemBuffer(size, path, llvm::Align(kHugePageBytes));
  if (!buffer)
    return failure(path + ": cannot allocate " + std::to_string(size) + " bytes to read the " +
                   kind + " into (without --no-mmap, it is mapped instead)");
  char *data = buffer->getBufferStart();
  adviseHugePages(data, size);
  uint64_t done = 0;
  while (done < size) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(size - done, 1ull << 30));
    ssize_t got = ::pread(fd, data + done, chunk, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      std::string why = got < 0 ? std::strerror(errno) : "the file ended early";
      return failure(path + ": read " + std::to_string(done) + " of " + std::to_string(size) +
                     " bytes of the " + kind + ": " + why);
    }
    done += static_cast<uint64_t>(got);
  }
  return std::unique_ptr<llvm::MemoryBuffer>(std::move(buffer));
}

/// Pages of the file that the mapping faults in from disk then come into
/// the page cache as 2 MiB folios, which map with one TLB entry each and
/// let the prefetchers run on past 4 KiB boundaries; pages already cached
/// keep their size. Advice only, and only for a mapping (LLVM reads a
/// small file into the heap instead). (On a 2-core AMD EPYC VM, the 110M
/// Llama's f32 GGUF, its pages dropped, then faulted in through a plain
/// mapping, mapped 266 of its 418 MiB in 2 MiB entries, and through an
/// advised one 402; its decode, alternating with llama.cpp's on the same
/// pages, went from 62.4 to 65.9 tok/s, llama.cpp's 55.8 and 55.5: one run
/// of 5 rounds each.)
void adviseHugeFolios(const llvm::MemoryBuffer &mapped) {
  if (mapped.getBufferKind() == llvm::MemoryBuffer::MemoryBuffer_MMap)
    madvise(const_cast<char *>(mapped.getBufferStart()), mapped.getBufferSize(), MADV_HUGEPAGE);
}

} // namespace

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
tfm::rt::readWeightFile(const std::string &path, WeightMemory memory, const std::string &kind) {
  if (memory == WeightMemory::Resident)
    return readIntoHugePages(path, kind);
  llvm::Expected<tfm::RegularFile> file = tfm::openRegularFile(path, kind);
  if (!file)
    return file.takeError();
  auto mapped = llvm::MemoryBuffer::getOpenFile(llvm::sys::fs::convertFDToNativeFile(file->fd()),
                                                path, file->size(),
                                                /*RequiresNullTerminator=*/false,
                                                /*IsVolatile=*/false);
  if (!mapped)
    return failure(path + ": cannot open the " + kind + ": " + mapped.getError().message());
  adviseHugeFolios(**mapped);
  return std::move(*mapped);
}
