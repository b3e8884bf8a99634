//===- ProgressMeter.h - Bytes written so far, on a terminal only -*- C++ -*-===//
#ifndef TFM_WEIGHTS_PROGRESSMETER_H
#define TFM_WEIGHTS_PROGRESSMETER_H

#include <cstdint>

namespace tfm {

/// Shows "written X / Y MiB" on stderr while a large file is written. Silent
/// when stderr is not a terminal so logs and test output stay clean.
class ProgressMeter {
public:
  explicit ProgressMeter(uint64_t totalBytes);
  ~ProgressMeter();

  void advance(uint64_t bytes);

private:
  uint64_t total;
  uint64_t done = 0;
  uint64_t lastShownMiB = ~0ull;
  bool enabled;
};

} // namespace tfm

#endif // TFM_WEIGHTS_PROGRESSMETER_H
