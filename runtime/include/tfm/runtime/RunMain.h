//===- RunMain.h - The tfm-run command line as a function -------*- C++ -*-===//
//
// tfm-run's whole program lives in the runtime so a standalone executable
// (`tfmc --emit exe`) can call it with its linked-in model.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_RUNMAIN_H
#define TFM_RUNTIME_RUNMAIN_H

#include "tfm/common/model_abi.h"

namespace tfm::rt {

/// Parses the command line and generates. With `linked` null the model comes
/// from --model DIR; otherwise `linked` is the model and --model is refused.
/// Returns the process exit code.
int runMain(int argc, char **argv, const tfm_model *linked);

} // namespace tfm::rt

#endif // TFM_RUNTIME_RUNMAIN_H
