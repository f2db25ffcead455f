// The residual stage on a device (CudaResidualStage: the upload and the real kernel) against
// its CPU twin, on random transform block records and on the records of x265 streams' pictures
// (which the GPU machine's bundle carries), into guarded device planes. With SIGPU_TWIN_TIMING
// set, the kernel's time on a 4K-sized picture of dense random blocks.
#include <gtest/gtest.h>

#include "hevc/residual_cases.hpp"
#include "hevc/residual_gpu.hpp"
#include "hevc/residual_stage.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;

void check_on_device(CudaResidualStage& stage, const testing::ResidualCase& rc) {
  SCOPED_TRACE(rc.name);
  const auto want = testing::cpu_residual(rc);
  twin::Arena a(twin::Memory::device);
  ResidualPlanes out;
  for (int c = 0; c < rc.planes; ++c) {
    out.data[c] = a.output<std::int16_t>("plane " + std::to_string(c), rc.plane_size(c));
    out.stride[c] = rc.width[c];
  }
  stage.run(rc.rec, rc.params(), out);
  stage.synchronize();
  EXPECT_TRUE(a.intact());
  for (int c = 0; c < rc.planes; ++c) {
    SCOPED_TRACE(twin::label("plane", c));
    EXPECT_TRUE(twin::equal(want[c], a.read(out.data[c], rc.plane_size(c))));
  }
}

TEST(HevcResidualGpu, KernelMatchesCpuOnRandomBlocks) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  CudaResidualStage stage;
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
    check_on_device(stage, testing::random_case(seed));
}

TEST(HevcResidualGpu, KernelMatchesCpuOnX265Pictures) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto cases = testing::stream_cases();
  if (cases.empty()) GTEST_SKIP() << "no x265 streams (make them with x265, bundle hevc-streams)";
  CudaResidualStage stage;
  for (const auto& rc : cases) check_on_device(stage, rc);
}

TEST(HevcResidualGpu, WorstCaseTiming) {
  if (!twin::have_device() || !twin::timing()) GTEST_SKIP() << "SIGPU_TWIN_TIMING not set";
  // About 4K of random blocks: the random case's 128x128 picture tiled 30 x 17 times.
  testing::ResidualCase rc = testing::random_case(2);
  const testing::ResidualCase tile = rc;
  rc.width[0] = 3840;
  rc.height[0] = 2176;
  for (int c = 1; c < 3; ++c) {
    rc.width[c] = rc.width[0] / 2;
    rc.height[c] = rc.height[0] / 2;
  }
  rc.rec.clear();
  for (int ty = 0; ty < rc.height[0] / tile.height[0]; ++ty)
    for (int tx = 0; tx < rc.width[0] / tile.width[0]; ++tx) {
      const TuRecords& s = tile.rec.tu;
      TuRecords& d = rc.rec.tu;
      for (std::size_t t = 0; t < s.size(); ++t) {
        const int sh = s.comp[t] ? 1 : 0;
        d.x.push_back(static_cast<std::uint16_t>(s.x[t] + (tx * tile.width[0] >> sh)));
        d.y.push_back(static_cast<std::uint16_t>(s.y[t] + (ty * tile.height[0] >> sh)));
        d.log2.push_back(s.log2[t]);
        d.comp.push_back(s.comp[t]);
        d.mode.push_back(s.mode[t]);
        d.qp.push_back(s.qp[t]);
        d.flags.push_back(s.flags[t]);
        d.cols.push_back(s.cols[t]);
        d.rows.push_back(s.rows[t]);
        d.coeff_begin.push_back(
            static_cast<std::uint32_t>(rc.rec.coeffs.size() + s.coeff_begin[t]));
        d.coeff_count.push_back(s.coeff_count[t]);
      }
      rc.rec.coeffs.insert(rc.rec.coeffs.end(), tile.rec.coeffs.begin(), tile.rec.coeffs.end());
    }
  twin::Arena a(twin::Memory::device);
  ResidualPlanes out;
  for (int c = 0; c < 3; ++c) {
    out.data[c] = a.output<std::int16_t>("plane", rc.plane_size(c));
    out.stride[c] = rc.width[c];
  }
  CudaResidualStage stage;
  twin::time_worst_case("hevc residual, 4K of random blocks (upload included)", [&](void*) {
    stage.run(rc.rec, rc.params(), out);
    stage.synchronize();
  });
}

}  // namespace
}  // namespace sigpu::hevc
