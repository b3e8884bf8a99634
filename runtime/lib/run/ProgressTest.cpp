//===- ProgressTest.cpp - Progress draws on a terminal only ---------------===//
//
// stderr is pointed at a pseudo-terminal (what a user's shell gives) or at a
// file (what CTest and pipes give) while a Progress runs.
//
//===----------------------------------------------------------------------===//
#include "tfm/runtime/Progress.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

using namespace tfm;
using namespace tfm::rt;

namespace {

/// Runs `work` with stderr on the file descriptor `fd`, then restores it.
template <typename Work> void withStderrOn(int fd, Work work) {
  int saved = dup(2);
  ASSERT_GE(saved, 0);
  ASSERT_GE(dup2(fd, 2), 0);
  work();
  dup2(saved, 2);
  close(saved);
}

/// Everything readable from `fd` within a short wait.
std::string drain(int fd) {
  std::string out;
  char buffer[256];
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, 200) > 0 && (p.revents & POLLIN)) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0)
      break;
    out.append(buffer, n);
  }
  return out;
}

void convert() {
  Progress progress("converting weights", 200);
  progress.advance(90);
  progress.advance(110);
}

} // namespace

TEST(Progress, DrawsPercentagesOnATerminal) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  int terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(terminal, 0);
  withStderrOn(terminal, convert);
  std::string shown = drain(master);
  close(terminal);
  close(master);
  EXPECT_NE(shown.find("\rconverting weights 45%"), std::string::npos) << shown;
  EXPECT_NE(shown.find("\rconverting weights 100%"), std::string::npos) << shown;
  EXPECT_EQ(shown.back(), '\n') << shown;
}

TEST(Progress, SilentWhenStderrIsNotATerminal) {
  std::string path = ::testing::TempDir() + "progress-stderr.txt";
  int file = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(file, 0);
  withStderrOn(file, convert);
  EXPECT_EQ(lseek(file, 0, SEEK_END), 0);
  close(file);
}
