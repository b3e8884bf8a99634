//===- exe_main.cpp - main() of a standalone model executable -------------===//
//
// `tfmc --emit exe` links this, the runtime and one model library into a
// single program that behaves as tfm-run with that model built in.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/RunMain.h"

int main(int argc, char **argv) {
  return tfm::rt::runMain(argc, argv, tfm_model_get());
}
