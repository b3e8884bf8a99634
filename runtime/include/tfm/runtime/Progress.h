//===- Progress.h - "label 45%" on a terminal, silence elsewhere -*- C++ -*-===//
//
// Long work (converting weights, compiling a model on first use, writing a
// large file) redraws one line on stderr while it runs, and only when
// stderr is a terminal, so logs and test output stay clean.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_PROGRESS_H
#define TFM_RUNTIME_PROGRESS_H

#include <cstdint>
#include <string>

namespace tfm::rt {

class Progress {
public:
  /// `total` units of work (bytes, kernels, ...) described by `label`.
  Progress(std::string label, uint64_t total);
  /// Ends the line, if one was drawn.
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// Records `units` more done; redraws when the percentage changes.
  void advance(uint64_t units);

private:
  std::string label;
  uint64_t total;
  uint64_t done = 0;
  int shownPercent = -1;
  bool enabled;
};

} // namespace tfm::rt

#endif // TFM_RUNTIME_PROGRESS_H
