// The inter prediction stage on a device (CudaInterStage: the upload and the real kernel)
// against its CPU twin, on random PU records and on the records of x265 streams' inter pictures
// (which the GPU machine's bundle carries), reference planes and guarded output planes in
// device memory. With SIGPU_TWIN_TIMING set, the kernel's time on a 4K picture of random PUs.
#include <gtest/gtest.h>

#include "hevc/inter_cases.hpp"
#include "hevc/inter_gpu.hpp"
#include "hevc/inter_stage.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;

void check_on_device(CudaInterStage& stage, const testing::InterCase& ic) {
  SCOPED_TRACE(ic.name);
  const auto want = testing::cpu_prediction(ic);
  twin::Arena a(twin::Memory::device);
  std::vector<RefPicture> refs(ic.refs.size());
  for (std::size_t k = 0; k < refs.size(); ++k)
    for (int c = 0; c < ic.planes; ++c)
      refs[k].plane[c] = {a.input(twin::label("ref", k, "plane", c), ic.refs[k][c]), ic.width[c],
                          ic.width[c], ic.height[c]};
  InterPlanes out;
  for (int c = 0; c < ic.planes; ++c) {
    out.data[c] = a.output<std::uint16_t>(twin::label("plane", c), ic.plane_size(c));
    out.stride[c] = ic.width[c];
  }
  stage.run(ic.pu, ic.slices, refs, ic.params, ic.width[0], ic.height[0], out);
  stage.synchronize();
  EXPECT_TRUE(a.intact());
  for (int c = 0; c < ic.planes; ++c) {
    SCOPED_TRACE(twin::label("plane", c));
    EXPECT_TRUE(twin::equal(want[c], a.read(out.data[c], ic.plane_size(c))));
  }
}

TEST(HevcInterGpu, KernelMatchesCpuOnRandomPus) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  CudaInterStage stage;
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
    check_on_device(stage, testing::random_inter_case(seed));
}

TEST(HevcInterGpu, KernelMatchesCpuOnX265Pictures) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto cases = testing::inter_stream_cases();
  if (cases.empty()) GTEST_SKIP() << "no x265 streams (make them with x265, bundle hevc-streams)";
  CudaInterStage stage;
  for (const auto& ic : cases) check_on_device(stage, ic);
}

TEST(HevcInterGpu, WorstCaseTiming) {
  if (!twin::have_device() || !twin::timing()) GTEST_SKIP() << "SIGPU_TWIN_TIMING not set";
  // 4K of random PUs, a third of them bi-predicted, most at fractional positions.
  const testing::InterCase ic = testing::random_inter_case(2, 3840, 2176);
  twin::Arena a(twin::Memory::device);
  std::vector<RefPicture> refs(ic.refs.size());
  for (std::size_t k = 0; k < refs.size(); ++k)
    for (int c = 0; c < ic.planes; ++c)
      refs[k].plane[c] = {a.input("ref", ic.refs[k][c]), ic.width[c], ic.width[c], ic.height[c]};
  InterPlanes out;
  for (int c = 0; c < ic.planes; ++c) {
    out.data[c] = a.output<std::uint16_t>("plane", ic.plane_size(c));
    out.stride[c] = ic.width[c];
  }
  CudaInterStage stage;
  twin::time_worst_case("hevc inter, 4K of random PUs (upload included)", [&](void*) {
    stage.run(ic.pu, ic.slices, refs, ic.params, ic.width[0], ic.height[0], out);
    stage.synchronize();
  });
}

}  // namespace
}  // namespace sigpu::hevc
