//===- IrFileTest.cpp - A .mlir file's nesting, measured on its text ------===//
#include "tfm/Lowering/IrFile.h"

#include <gtest/gtest.h>

#include <string>

namespace tfm {
namespace {

std::string refusal(const std::string &text, unsigned limit = 4) {
  llvm::Error e = checkNestingDepth(text, "m.mlir", limit);
  return e ? llvm::toString(std::move(e)) : "";
}

TEST(NestingDepth, CountsEveryBracket) {
  EXPECT_EQ(refusal("module { func { %a = x : tensor<?x!t.b<\"q\">> }}"), "");
  EXPECT_EQ(refusal("module {\n  f(a[b<c{d}>])\n}"), "m.mlir:2:10: brackets nested 5 deep, "
                                                     "expected at most 4");
}

TEST(NestingDepth, ArrowsAndComparisonsCloseNothing) {
  // Were '->' or '>=' to close a bracket, these would hide a fifth level.
  EXPECT_NE(refusal("((((-> (x)"), "");
  EXPECT_NE(refusal("((((>= (x)"), "");
  EXPECT_EQ(refusal("(a) -> (b) -> (c)"), "");
}

TEST(NestingDepth, SkipsStringsAndComments) {
  EXPECT_EQ(refusal("x = \"((((((\\\"((((\" // ((((((\ny"), "");
  EXPECT_EQ(refusal("\"a\nb\" // c\n((((("), "m.mlir:3:5: brackets nested 5 deep, expected at "
                                              "most 4");
}

TEST(NestingDepth, RefusesAHostileFile) {
  std::string deep(250000, '[');
  EXPECT_EQ(refusal(deep, kMaxIrNesting), "m.mlir:1:65: brackets nested 65 deep, expected at "
                                          "most 64");
}

} // namespace
} // namespace tfm
