#include "core/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace sigpu {
namespace {

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  ThreadPool pool(4);
  for (std::size_t n : {0u, 1u, 7u, 1000u, 100003u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(
        n,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) hits[i]++;
        },
        n % 5);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, RethrowsTheFirstExceptionAfterAllChunks) {
  ThreadPool pool(3);
  std::atomic<int> done{0};
  EXPECT_THROW(pool.parallel_for(
                   100,
                   [&](std::size_t b, std::size_t e) {
                     done += static_cast<int>(e - b);
                     if (b == 0) throw std::runtime_error("boom");
                   },
                   1),
               std::runtime_error);
  EXPECT_EQ(done.load(), 100);
  // The pool is still usable.
  std::atomic<int> again{0};
  pool.parallel_for(10, [&](std::size_t b, std::size_t e) { again += static_cast<int>(e - b); });
  EXPECT_EQ(again.load(), 10);
}

}  // namespace
}  // namespace sigpu
