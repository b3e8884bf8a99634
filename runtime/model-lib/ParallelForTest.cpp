//===- ParallelForTest.cpp - The model library's parallel loops ----------===//
//
// parallel_for.c as a model library runs it: many loops one after another
// (a decode step's kernels), loops inside tasks, failing tasks, and loops
// begun from two threads at once.
//
//===----------------------------------------------------------------------===//
#include "parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace {

/// A loop's closure: how often each iteration ran, and on which threads.
struct Counts {
  std::vector<std::atomic<int>> runs;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  int failAt = -1;
  std::chrono::microseconds work{0};
  explicit Counts(int n) : runs(n) {}
};

int countTask(void *, int i, uint8_t *closure) {
  auto &c = *reinterpret_cast<Counts *>(closure);
  c.runs[i].fetch_add(1);
  if (c.work.count())
    std::this_thread::sleep_for(c.work);
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.threads.insert(std::this_thread::get_id());
  }
  return i == c.failAt ? 7 : 0;
}

int runLoop(Counts &c, int min = 0) {
  return tfm_parallel_for(nullptr, countTask, min, static_cast<int>(c.runs.size()) - min,
                          reinterpret_cast<uint8_t *>(&c));
}

void expectEachOnce(const Counts &c, int min = 0) {
  for (size_t i = 0; i < c.runs.size(); ++i)
    ASSERT_EQ(c.runs[i].load(), i < size_t(min) ? 0 : 1) << "iteration " << i;
}

TEST(ParallelFor, EveryIterationRunsOnceInLoopAfterLoop) {
  tfm_parallel_for_threads(4);
  for (int loop = 0; loop < 2000; ++loop) {
    int size = loop % 97, min = loop % 5;
    Counts c(size + min);
    ASSERT_EQ(runLoop(c, min), 0);
    expectEachOnce(c, min);
  }
}

TEST(ParallelFor, WorkersTakePartAndOneThreadRunsAlone) {
  tfm_parallel_for_threads(2);
  Counts shared(256);
  shared.work = std::chrono::microseconds(200);
  ASSERT_EQ(runLoop(shared), 0);
  expectEachOnce(shared);
  EXPECT_EQ(shared.threads.size(), 2u);

  tfm_parallel_for_threads(1);
  Counts alone(64);
  alone.work = std::chrono::microseconds(50);
  ASSERT_EQ(runLoop(alone), 0);
  expectEachOnce(alone);
  EXPECT_EQ(alone.threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ParallelFor, WorkersAsleepAreWoken) {
  tfm_parallel_for_threads(2);
  Counts first(8);
  ASSERT_EQ(runLoop(first), 0);
  // Long enough for the workers to stop spinning and sleep.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Counts later(256);
  later.work = std::chrono::microseconds(200);
  ASSERT_EQ(runLoop(later), 0);
  expectEachOnce(later);
  EXPECT_EQ(later.threads.size(), 2u);
}

TEST(ParallelFor, AFailingTaskFailsTheLoop) {
  tfm_parallel_for_threads(3);
  Counts c(100);
  c.failAt = 42;
  EXPECT_EQ(runLoop(c), 7);
  Counts next(100); // the pool is usable after a failure
  EXPECT_EQ(runLoop(next), 0);
  expectEachOnce(next);
}

/// Each iteration runs a loop of its own, as a kernel with nested parallel
/// loops would.
int nestedTask(void *, int i, uint8_t *closure) {
  auto &inner = *reinterpret_cast<std::deque<Counts> *>(closure);
  return runLoop(inner[i]);
}

TEST(ParallelFor, LoopsInsideTasksRunWhole) {
  tfm_parallel_for_threads(2);
  std::deque<Counts> inner;
  for (int i = 0; i < 16; ++i)
    inner.emplace_back(32);
  ASSERT_EQ(tfm_parallel_for(nullptr, nestedTask, 0, 16, reinterpret_cast<uint8_t *>(&inner)), 0);
  for (const Counts &c : inner) {
    expectEachOnce(c);
    EXPECT_EQ(c.threads.size(), 1u); // each in the thread of its task
  }
}

TEST(ParallelFor, LoopsFromTwoThreadsAtOnce) {
  tfm_parallel_for_threads(2);
  auto loops = [] {
    for (int loop = 0; loop < 500; ++loop) {
      Counts c(1 + loop % 50);
      c.work = std::chrono::microseconds(10); // so that the two threads' loops overlap
      ASSERT_EQ(runLoop(c), 0);
      expectEachOnce(c);
    }
  };
  std::thread other(loops);
  loops();
  other.join();
}

} // namespace
