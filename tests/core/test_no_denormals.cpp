// ScopedNoDenormals flushes subnormal results on its thread and restores the mode after; the
// real-time pool's jobs run flushed on every thread, the caller's included.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "core/no_denormals.hpp"
#include "core/rt_pool.hpp"

namespace sigpu {
namespace {

/// A product that is subnormal (about 1e-41) unless the thread flushes it to zero.
float tiny_product() {
  volatile float a = 1e-38f, b = 1e-3f;
  return a * b;
}

#if defined(__x86_64__) || defined(_M_X64) || defined(__SSE__) || defined(__aarch64__)
TEST(NoDenormals, FlushesInScopeAndRestoresAfter) {
  ASSERT_NE(tiny_product(), 0.0f) << "the thread already flushes denormals";
  {
    const ScopedNoDenormals flush;
    EXPECT_EQ(tiny_product(), 0.0f);
  }
  EXPECT_NE(tiny_product(), 0.0f);
}

TEST(NoDenormals, RealTimePoolJobsFlushOnEveryThread) {
  RtPool pool(RtPoolOptions{.threads = 4});
  std::vector<float> got(64, 1.0f);
  pool.run(
      got.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) got[i] = tiny_product();
      },
      1);
  for (float v : got) EXPECT_EQ(v, 0.0f);
  EXPECT_NE(tiny_product(), 0.0f) << "the caller's mode is restored after the job";
}
#endif

}  // namespace
}  // namespace sigpu
