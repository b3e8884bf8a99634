//===- main.cpp - tfm-run: generate text with a model folder from tfmc ----===//
#include "tfm/runtime/RunMain.h"

int main(int argc, char **argv) { return tfm::rt::runMain(argc, argv, nullptr); }
