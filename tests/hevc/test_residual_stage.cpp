// The residual stage's CUDA kernel, run unchanged on the CPU under cuda_emulation.hpp, against
// its CPU twin (residual_stage_cpu, the code the CPU reconstruction adds to its predictions):
// random transform block records and the records of x265 streams' pictures, every residual
// sample equal, nothing written outside the planes, no input changed.
#include "support/cuda_emulation.hpp"
// (the emulation first)
#include "hevc/cuda/residual_kernel.cuh"

#include <gtest/gtest.h>

#include <cstring>

#include "hevc/residual_cases.hpp"
#include "hevc/residual_stage.hpp"
#include "hevc/streams.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;
namespace kernels = sigpu::hevc::cuda;

// The kernel over `rc` under the emulation, from inputs and into planes of a checked arena.
void check_emulated(const testing::ResidualCase& rc) {
  SCOPED_TRACE(rc.name);
  const auto want = testing::cpu_residual(rc);
  TuOrder order;
  order_coded_tus(rc.rec.tu, order);

  twin::Arena a;
  const TuRecords& tu = rc.rec.tu;
  kernels::ResidualArgs args{};
  args.tu = {a.input("x", tu.x),
             a.input("y", tu.y),
             a.input("log2", tu.log2),
             a.input("comp", tu.comp),
             a.input("mode", tu.mode),
             a.input("qp", tu.qp),
             a.input("flags", tu.flags),
             a.input("cols", tu.cols),
             a.input("rows", tu.rows),
             a.input("coeff_begin", tu.coeff_begin),
             a.input("coeff_count", tu.coeff_count)};
  args.coeffs = a.input("coeffs", rc.rec.coeffs);
  args.order = a.input("order", order.tu);
  std::memcpy(args.order_begin, order.begin, sizeof order.begin);
  kernels::residual_tiles(args.order_begin, args.tile_begin);
  args.params = rc.params();
  if (rc.scaling_on) args.params.scaling = a.input("scaling", rc.scaling.table);
  const TransformMatrices matrices = kTransformMatrices;
  args.matrices = a.input("matrices", std::span(&matrices, 1));
  for (int c = 0; c < rc.planes; ++c) {
    args.out.data[c] = a.output<std::int16_t>("plane " + std::to_string(c), rc.plane_size(c));
    args.out.stride[c] = rc.width[c];
  }
  ASSERT_GT(args.tile_begin[4], 0u);
  sigpu::test::emulation::launch({args.tile_begin[4]}, {kernels::kResidualThreads},
                                 sigpu::test::emulation::Barriers::block,
                                 [&] { kernels::residual_kernel(args); });
  EXPECT_TRUE(a.intact());
  for (int c = 0; c < rc.planes; ++c) {
    SCOPED_TRACE(twin::label("plane", c));
    EXPECT_TRUE(twin::equal(want[c], a.read(args.out.data[c], rc.plane_size(c))));
  }
}

// The twin writes every coded block's samples and nothing else: what the kernel is held to.
TEST(HevcResidualStage, CpuTwinWritesExactlyTheCodedBlocks) {
  const auto rc = testing::random_case(3);
  const auto planes = testing::cpu_residual(rc);
  std::vector<std::vector<int>> written(3);
  for (int c = 0; c < 3; ++c) written[c].assign(rc.plane_size(c), 0);
  const TuRecords& tu = rc.rec.tu;
  int coded = 0;
  for (std::size_t t = 0; t < tu.size(); ++t) {
    if (!(tu.flags[t] & kTuCoded)) continue;
    ++coded;
    const int n = 1 << tu.log2[t], c = tu.comp[t];
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) ++written[c][(tu.y[t] + y) * rc.width[c] + tu.x[t] + x];
  }
  EXPECT_GT(coded, 50);
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < planes[c].size(); ++i) {
      ASSERT_LE(written[c][i], 1) << "blocks overlap";
      // A residual may equal the poison by chance; the test's seed makes none do.
      ASSERT_EQ(planes[c][i] != twin::poisoned<std::int16_t>(), written[c][i] == 1)
          << "plane " << c << " sample " << i;
    }
}

TEST(HevcResidualStage, EmulatedKernelMatchesCpuOnRandomBlocks) {
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4, 5, 6}))
    check_emulated(testing::random_case(seed));
}

TEST(HevcResidualStage, EmulatedKernelMatchesCpuOnX265Pictures) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  const auto cases = testing::stream_cases();
  EXPECT_EQ(cases.size(), 10u);
  for (const auto& rc : cases) check_emulated(rc);
}

}  // namespace
}  // namespace sigpu::hevc
