//===- WeightFileBytes.h - Where a weight file's bytes live -----*- C++ -*-===//
//
// The generated kernels read weights in place, from the bytes the loaders
// hand them. By default those are the file mapped read-only: nothing is
// copied, the pages are the page cache's, shared between processes and
// kept across runs; the mapping is advised into huge pages, so that what
// it reads from disk is cached in 2 MiB folios. `Resident` reads the file instead into the process's
// own memory, in 2 MiB pages where the system grants them, as llama.cpp
// does with --no-mmap (and always for the weights its AMX back end
// repacks). On a KVM guest measured for issue 8 (Intel Sapphire Rapids),
// a 7 GB file's cached pages read at 15 GB/s with two cores while fresh
// memory in huge pages read at 29-39, whichever the file's pages' size
// (an hour later: 26 against 32).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_WEIGHTFILEBYTES_H
#define TFM_RUNTIME_WEIGHTFILEBYTES_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace tfm::rt {

enum class WeightMemory {
  Mapped,   ///< the file mapped read-only (the default)
  Resident, ///< the file read into memory of the process's own
};

/// The whole file at `path`, as `memory` says. An error names the file, as
/// `kind` ("GGUF file", "checkpoint"), and what failed.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readWeightFile(const std::string &path, WeightMemory memory, const std::string &kind);

} // namespace tfm::rt

#endif // TFM_RUNTIME_WEIGHTFILEBYTES_H
