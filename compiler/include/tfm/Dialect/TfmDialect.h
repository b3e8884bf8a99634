//===- TfmDialect.h - The tfm dialect ---------------------------*- C++ -*-===//
#ifndef TFM_DIALECT_TFMDIALECT_H
#define TFM_DIALECT_TFMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tfm/Dialect/TfmDialect.h.inc"

#include "mlir/IR/BuiltinTypes.h"

#define GET_TYPEDEF_CLASSES
#include "tfm/Dialect/TfmTypes.h.inc"

#endif // TFM_DIALECT_TFMDIALECT_H
