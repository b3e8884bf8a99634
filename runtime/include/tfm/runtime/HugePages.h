//===- HugePages.h - Buffers in huge pages ----------------------*- C++ -*-===//
//
// Huge pages hold 2 MiB of a buffer under one TLB entry. Linux backs a
// buffer with them (transparent huge pages in "madvise" mode, Debian's
// default) only where the process advises it to, before the first write
// faults the pages in. Used by the session's cache and arena, by the
// weights read with --no-mmap and by tfm-bench's read probes.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_HUGEPAGES_H
#define TFM_RUNTIME_HUGEPAGES_H

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace tfm::rt {

constexpr size_t kHugePageBytes = size_t(2) << 20;

/// `bytes` rounded up to whole huge pages.
inline size_t wholeHugePages(size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

/// Advises Linux to back the huge pages from `hugePageAligned` on that
/// cover `bytes` with huge pages. Advice only: where it is refused, 4 KiB
/// pages.
inline void adviseHugePages(void *hugePageAligned, size_t bytes) {
  madvise(hugePageAligned, wholeHugePages(bytes), MADV_HUGEPAGE);
}

/// At least `bytes` of zeroed memory in whole huge pages, advised before
/// the zeroing faults them in; free with std::free. Null where the
/// allocation fails.
inline void *allocateInHugePages(size_t bytes) {
  size_t size = wholeHugePages(bytes);
  void *p = std::aligned_alloc(kHugePageBytes, size);
  if (!p)
    return nullptr;
  adviseHugePages(p, size);
  std::memset(p, 0, size);
  return p;
}

} // namespace tfm::rt

#endif // TFM_RUNTIME_HUGEPAGES_H
