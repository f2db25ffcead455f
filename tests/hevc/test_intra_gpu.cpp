// The intra stage on a device (CudaIntraStage: the upload and the real kernel, a launch per
// level) against its CPU twin, on random records and on the records of x265 streams' pictures
// (which the GPU machine's bundle carries), residual and picture planes in guarded device
// memory. With SIGPU_TWIN_TIMING set, the stage's time on a 1080p picture of random blocks.
#include <gtest/gtest.h>

#include "hevc/intra_cases.hpp"
#include "hevc/intra_gpu.hpp"
#include "hevc/intra_stage.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;

// The planes of `ic` in device memory: residual as input, the picture in-out.
struct DevicePlanes {
  ResidualPlanes residual;
  InterPlanes planes;
  DevicePlanes(twin::Arena& a, const testing::IntraCase& ic) {
    for (int c = 0; c < ic.planes; ++c) {
      residual.data[c] = a.input(twin::label("residual", c), ic.residual[c]);
      residual.stride[c] = ic.width[c];
      planes.data[c] = a.in_out(twin::label("plane", c), ic.start[c]);
      planes.stride[c] = ic.width[c];
    }
  }
};

void check_on_device(CudaIntraStage& stage, const testing::IntraCase& ic) {
  SCOPED_TRACE(ic.name);
  const IntraOrder order = testing::intra_order(ic);
  const auto want = testing::cpu_intra(ic, order);
  twin::Arena a(twin::Memory::device);
  const DevicePlanes d(a, ic);
  stage.run(ic.tu, order, ic.params, d.residual, d.planes);
  EXPECT_TRUE(a.intact());
  for (int c = 0; c < ic.planes; ++c) {
    SCOPED_TRACE(twin::label("plane", c));
    EXPECT_TRUE(twin::equal(want[c], a.read(d.planes.data[c], ic.plane_size(c))));
  }
}

TEST(HevcIntraGpu, KernelMatchesCpuOnRandomBlocks) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  CudaIntraStage stage(nullptr);
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
    check_on_device(stage, testing::random_intra_case(seed));
}

TEST(HevcIntraGpu, KernelMatchesCpuOnX265Pictures) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto cases = testing::intra_stream_cases();
  if (cases.empty()) GTEST_SKIP() << "no x265 streams (make them with x265, bundle hevc-streams)";
  CudaIntraStage stage(nullptr);
  for (const auto& ic : cases) {
    check_on_device(stage, ic);
    // The twin rebuilds the decoder's samples (test_intra_stage.cpp); so must the device.
    const IntraOrder order = testing::intra_order(ic);
    const auto twin_planes = testing::cpu_intra(ic, order);
    for (int c = 0; c < ic.planes; ++c) EXPECT_TRUE(twin::equal(ic.want[c], twin_planes[c]));
  }
}

TEST(HevcIntraGpu, WorstCaseTiming) {
  if (!twin::have_device() || !twin::timing()) GTEST_SKIP() << "SIGPU_TWIN_TIMING not set";
  // 1080p of random blocks, nearly all intra: many levels, every size.
  const testing::IntraCase ic = testing::random_intra_case(4, 1920, 1088);
  const IntraOrder order = testing::intra_order(ic);
  twin::Arena a(twin::Memory::device);
  const DevicePlanes d(a, ic);
  std::unique_ptr<CudaIntraStage> stage;
  const std::string what = "hevc intra, 1080p of random blocks, " + std::to_string(order.levels()) +
                           " levels (upload included)";
  twin::time_worst_case(what, [&](void* stream) {
    if (!stage) stage = std::make_unique<CudaIntraStage>(stream);
    stage->run(ic.tu, order, ic.params, d.residual, d.planes);
  });
}

}  // namespace
}  // namespace sigpu::hevc
