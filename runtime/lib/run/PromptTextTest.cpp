//===- PromptTextTest.cpp - llama.cpp's -e escapes ------------------------===//
#include "tfm/runtime/PromptText.h"

#include <gtest/gtest.h>

using tfm::rt::processEscapes;

TEST(PromptText, EscapesAsLlamaCppReadsThem) {
  EXPECT_EQ(processEscapes("a\\nb\\tc\\rd"), "a\nb\tc\rd");
  EXPECT_EQ(processEscapes("\\\\n stays \\\\"), "\\n stays \\");
  EXPECT_EQ(processEscapes("\\'q\\\""), "'q\"");
  EXPECT_EQ(processEscapes("\\x41\\x7a\\x0A"), "Az\n");
}

TEST(PromptText, NonEscapesStayAsWritten) {
  EXPECT_EQ(processEscapes("\\q \\x4 \\xZZ end\\"), "\\q \\x4 \\xZZ end\\");
  EXPECT_EQ(processEscapes("plain"), "plain");
}
