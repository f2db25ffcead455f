// The twin harness itself, on the CPU: a mismatch is reported with its index and both values, a
// write out of bounds with its offset, a changed input, an element a kernel never writes; and a
// small CUDA kernel, run unchanged under the emulation, is caught writing past its output.
#include "support/cuda_emulation.hpp"
// (the emulation before any kernel)
#include "support/twin.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace twin = sigpu::test::twin;
namespace emulation = sigpu::test::emulation;

namespace {

bool has(const ::testing::AssertionResult& r, const std::string& text) {
  return std::string(r.message()).find(text) != std::string::npos;
}

constexpr unsigned kBlock = 8;

// Reverses each block of kBlock elements of in into out through shared memory; the last block
// may be partial, and only with `guarded` do its threads past n stay out of out.
__global__ void __launch_bounds__(kBlock)
    reverse_blocks(const int* in, int* out, unsigned n, bool guarded) {
  __shared__ int tile[kBlock];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : -1;
  __syncthreads();
  if (guarded && i >= n) return;
  out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

std::vector<int> reverse_blocks_reference(const std::vector<int>& in) {
  std::vector<int> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::size_t j = i / kBlock * kBlock + (kBlock - 1 - i % kBlock);
    out[i] = j < in.size() ? in[j] : -1;
  }
  return out;
}

}  // namespace

TEST(TwinHarness, EqualNamesTheFirstDifferenceAndCountsThem) {
  const std::vector<int> want{1, 2, 3, 4, 5};
  EXPECT_TRUE(twin::equal(want, std::vector<int>{1, 2, 3, 4, 5}));
  const auto r = twin::equal(want, std::vector<int>{1, 7, 3, 9, 5});
  EXPECT_FALSE(r);
  EXPECT_TRUE(has(r, "2 of 5 elements differ; first at 1: want 2, got 7")) << r.message();
  const auto sizes = twin::equal(want, std::vector<int>{1, 2, 3});
  EXPECT_FALSE(sizes);
  EXPECT_TRUE(has(sizes, "sizes differ: want 5, got 3")) << sizes.message();
  const std::vector<std::uint8_t> bits{0, 1, 1};
  EXPECT_TRUE(has(twin::equal(bits, std::vector<std::uint8_t>{0, 1, 0}), "want 1, got 0"));
}

TEST(TwinHarness, ToleranceIsTheCallers) {
  const std::vector<float> want{1.0f, 2.0f};
  const std::vector<float> got{1.0f, 2.001f};
  EXPECT_FALSE(twin::equal(want, got));
  EXPECT_TRUE(twin::equal(want, got, 0.01));
  EXPECT_FALSE(twin::equal(want, got, 0.0001));
  const std::vector<float> nan{1.0f, std::nanf("")};
  EXPECT_FALSE(twin::equal(nan, nan, 1.0));  // NaN is never within a tolerance
}

TEST(TwinHarness, WritesOutOfBoundsAreCaughtWithTheirOffset) {
  twin::Arena a;
  int* out = a.output<int>("out", 4);
  EXPECT_TRUE(a.intact());
  out[4] = 0;  // the 16 bytes of out, then 4 more
  const auto past = a.intact();
  EXPECT_FALSE(past);
  EXPECT_TRUE(has(past, "\"out\": written past its end, 4 byte(s) from offset 16 to 19"))
      << past.message();
  a.poison();
  EXPECT_TRUE(a.intact());
  reinterpret_cast<char*>(out)[-3] = 1;
  const auto before = a.intact();
  EXPECT_TRUE(has(before, "written before its start, 1 byte(s) from offset -3 to -3"))
      << before.message();
}

TEST(TwinHarness, ChangedInputsAndUnwrittenOutputsAreCaught) {
  twin::Arena a;
  const std::vector<std::int16_t> values{3, 1, 4, 1, 5};
  std::int16_t* in = a.input("in", values);
  std::int16_t* out = a.output<std::int16_t>("out", values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    if (i != 2) out[i] = in[i];  // a "kernel" that forgets element 2
  EXPECT_TRUE(a.intact());
  const auto r = twin::equal(values, a.read(out, values.size()));
  EXPECT_TRUE(has(r, "1 of 5 elements differ; first at 2: want 4, got " +
                         std::to_string(twin::poisoned<std::int16_t>())))
      << r.message();
  in[3] = 9;
  const auto changed = a.intact();
  EXPECT_TRUE(has(changed, "\"in\": input changed, 1 byte(s) from offset 6 to 6"))
      << changed.message();
}

TEST(TwinHarness, EmulatedKernelAgainstItsTwin) {
  for (unsigned n : {1u, 8u, 20u}) {
    SCOPED_TRACE(twin::label("n", n));
    std::vector<int> in(n);
    for (unsigned i = 0; i < n; ++i) in[i] = int(i * 7 + 1);
    const dim3 grid{(n + kBlock - 1) / kBlock}, block{kBlock};
    for (bool guarded : {true, false}) {
      twin::Arena a;
      const int* d_in = a.input("in", in);
      int* d_out = a.output<int>("out", n);
      emulation::launch(grid, block, emulation::Barriers::block,
                        [&] { reverse_blocks(d_in, d_out, n, guarded); });
      EXPECT_TRUE(twin::equal(reverse_blocks_reference(in), a.read(d_out, n)));
      // Without the bound, a partial last block writes past the output.
      EXPECT_EQ(bool(a.intact()), guarded || n % kBlock == 0) << a.intact().message();
    }
  }
}

TEST(TwinHarness, SeedsAndTimingFollowTheEnvironment) {
  ::unsetenv("SIGPU_TWIN_SEED");
  EXPECT_EQ(twin::seeds({4, 5}), (std::vector<std::uint64_t>{4, 5}));
  ::setenv("SIGPU_TWIN_SEED", "77", 1);
  EXPECT_EQ(twin::seeds({4, 5}), (std::vector<std::uint64_t>{77}));
  ::unsetenv("SIGPU_TWIN_SEED");
  EXPECT_EQ(twin::label("K", 6144, "P", 768), "K 6144 P 768");
  if (twin::timing()) GTEST_SKIP() << "SIGPU_TWIN_TIMING is set";
  bool ran = false;
  twin::time_worst_case("nothing", [&](void*) { ran = true; });
  EXPECT_FALSE(ran) << "timing ran without SIGPU_TWIN_TIMING";
}
