//===- TfmDialect.cpp - Registration of the tfm dialect -------------------===//
#include "tfm/Dialect/TfmDialect.h"
#include "tfm/Dialect/TfmOps.h"

#include "tfm/Dialect/TfmDialect.cpp.inc"

void tfm::TfmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfm/Dialect/TfmOps.cpp.inc"
      >();
}
