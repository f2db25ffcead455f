// The inter prediction stage's CUDA kernel, run unchanged on the CPU under cuda_emulation.hpp,
// against its CPU twin (inter_stage_cpu), and the twin against the decoder's block filters
// (inter_pred.hpp): random PU records and the records of x265 streams' inter pictures, every
// predicted sample equal, nothing written outside the PUs or the planes, no input changed.
#include "support/cuda_emulation.hpp"
// (the emulation first)
#include "hevc/cuda/inter_kernel.cuh"

#include <gtest/gtest.h>

#include <algorithm>

#include "hevc/errors.hpp"
#include "hevc/inter_cases.hpp"
#include "hevc/inter_stage.hpp"
#include "hevc/streams.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;
namespace kernels = sigpu::hevc::cuda;

// The kernel over `ic` under the emulation, from inputs and into planes of a checked arena.
void check_emulated(const testing::InterCase& ic) {
  SCOPED_TRACE(ic.name);
  const auto want = testing::cpu_prediction(ic);
  twin::Arena a;
  const PuRecords& pu = ic.pu;
  kernels::InterArgs args{};
  args.pu = {a.input("x", pu.x),
             a.input("y", pu.y),
             a.input("w", pu.w),
             a.input("h", pu.h),
             reinterpret_cast<const std::int16_t*>(a.input("mv", pu.mv)),
             reinterpret_cast<const std::int8_t*>(a.input("ref_idx", pu.ref_idx)),
             a.input("slice", pu.slice)};
  args.slices = a.input("slices", ic.slices);
  std::vector<RefPicture> refs(ic.refs.size());
  for (std::size_t k = 0; k < refs.size(); ++k)
    for (int c = 0; c < ic.planes; ++c)
      refs[k].plane[c] = {a.input(twin::label("ref", k, "plane", c), ic.refs[k][c]), ic.width[c],
                          ic.width[c], ic.height[c]};
  args.refs = a.input("refs", refs);
  args.params = ic.params;
  for (int c = 0; c < ic.planes; ++c) {
    args.out.data[c] = a.output<std::uint16_t>(twin::label("plane", c), ic.plane_size(c));
    args.out.stride[c] = ic.width[c];
  }
  ASSERT_GT(pu.size(), 0u);
  sigpu::test::emulation::launch({static_cast<unsigned>(pu.size())}, {kernels::kInterThreads},
                                 sigpu::test::emulation::Barriers::none,
                                 [&] { kernels::inter_kernel(args); });
  EXPECT_TRUE(a.intact());
  for (int c = 0; c < ic.planes; ++c) {
    SCOPED_TRACE(twin::label("plane", c));
    EXPECT_TRUE(twin::equal(want[c], a.read(args.out.data[c], ic.plane_size(c))));
  }
}

// The twin writes every PU's samples and nothing else, and they are the decoder's.
TEST(HevcInterStage, CpuTwinMatchesTheDecodersBlockFilters) {
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4})) {
    const auto ic = testing::random_inter_case(seed);
    SCOPED_TRACE(ic.name);
    const auto twin_planes = testing::cpu_prediction(ic);
    const auto block_planes = testing::block_prediction(ic);
    for (int c = 0; c < ic.planes; ++c) {
      SCOPED_TRACE(twin::label("plane", c));
      EXPECT_TRUE(twin::equal(block_planes[c], twin_planes[c]));
      // The random PUs tile the picture: every sample is predicted.
      EXPECT_EQ(
          std::count(twin_planes[c].begin(), twin_planes[c].end(), twin::poisoned<std::uint16_t>()),
          0);
    }
  }
}

TEST(HevcInterStage, RefusesRecordsOutsideTheTables) {
  auto ic = testing::random_inter_case(1);
  const int refs = static_cast<int>(ic.refs.size());
  EXPECT_NO_THROW(
      check_inter_records(ic.pu, ic.slices, refs, ic.width[0], ic.height[0], ic.params));
  EXPECT_THROW(
      check_inter_records(ic.pu, ic.slices, refs, ic.width[0], ic.height[0] - 4, ic.params),
      DecodeError);
  EXPECT_THROW(check_inter_records(ic.pu, std::span(ic.slices).first(1), refs, ic.width[0],
                                   ic.height[0], ic.params),
               DecodeError);
  EXPECT_THROW(check_inter_records(ic.pu, ic.slices, 1, ic.width[0], ic.height[0], ic.params),
               DecodeError);
  ic.params.chroma_format = 2;
  EXPECT_THROW(check_inter_records(ic.pu, ic.slices, refs, ic.width[0], ic.height[0], ic.params),
               Unsupported);
}

TEST(HevcInterStage, EmulatedKernelMatchesCpuOnRandomPus) {
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4, 5, 6}))
    check_emulated(testing::random_inter_case(seed));
}

TEST(HevcInterStage, EmulatedKernelMatchesCpuOnX265Pictures) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  const auto cases = testing::inter_stream_cases();
  EXPECT_EQ(cases.size(), 8u);
  bool weighted = false;
  for (const auto& ic : cases) {
    SCOPED_TRACE(ic.name);
    EXPECT_GT(ic.pu.size(), 10u);
    for (const InterSlice& s : ic.slices) weighted |= s.weighted != 0;
    const auto twin_planes = testing::cpu_prediction(ic);
    const auto block_planes = testing::block_prediction(ic);
    for (int c = 0; c < ic.planes; ++c) EXPECT_TRUE(twin::equal(block_planes[c], twin_planes[c]));
    check_emulated(ic);
  }
  EXPECT_TRUE(weighted) << "no stream used explicit weighted prediction";
}

}  // namespace
}  // namespace sigpu::hevc
