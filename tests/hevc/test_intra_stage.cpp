// The intra stage: its per-sample code (intra_sample.hpp) against the decoder's block prediction
// (gather_intra_refs, intra_predict); its CPU twin against the decoder's reconstruction of x265
// pictures, starting from garbage in every intra block, with levels checked to be a valid order;
// and its CUDA kernel, run unchanged on the CPU under cuda_emulation.hpp, against the twin: every
// sample equal, nothing written outside the planes, no input changed.
#include "support/cuda_emulation.hpp"
// (the emulation first)
#include "hevc/cuda/intra_kernel.cuh"

#include <gtest/gtest.h>

#include <algorithm>

#include "hevc/errors.hpp"
#include "hevc/intra_cases.hpp"
#include "hevc/intra_pred.hpp"
#include "hevc/intra_stage.hpp"
#include "hevc/streams.hpp"
#include "support/rng.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;
namespace kernels = sigpu::hevc::cuda;

// The kernel over `ic` under the emulation, a launch per level, into in-out planes of a checked
// arena; `want` the twin's planes.
void check_emulated(const testing::IntraCase& ic,
                    const std::array<std::vector<std::uint16_t>, 3>& want) {
  SCOPED_TRACE(ic.name);
  const IntraOrder order = testing::intra_order(ic);
  twin::Arena a;
  const TuRecords& tu = ic.tu;
  kernels::IntraArgs args{};
  args.tu = {a.input("x", tu.x),        a.input("y", tu.y),       a.input("log2", tu.log2),
             a.input("comp", tu.comp),  a.input("mode", tu.mode), a.input("flags", tu.flags),
             a.input("avail", tu.avail)};
  args.order = a.input("order", order.tu);
  args.params = ic.params;
  for (int c = 0; c < ic.planes; ++c) {
    args.residual.data[c] = a.input(twin::label("residual", c), ic.residual[c]);
    args.residual.stride[c] = ic.width[c];
    args.planes.data[c] = a.in_out(twin::label("plane", c), ic.start[c]);
    args.planes.stride[c] = ic.width[c];
  }
  ASSERT_GT(order.levels(), 0u);
  for (std::size_t l = 0; l < order.levels(); ++l) {
    args.first = order.begin[l];
    sigpu::test::emulation::launch({order.begin[l + 1] - order.begin[l]}, {kernels::kIntraThreads},
                                   sigpu::test::emulation::Barriers::block,
                                   [&] { kernels::intra_kernel(args); });
  }
  EXPECT_TRUE(a.intact());
  for (int c = 0; c < ic.planes; ++c) {
    SCOPED_TRACE(twin::label("plane", c));
    EXPECT_TRUE(twin::equal(want[c], a.read(args.planes.data[c], ic.plane_size(c))));
  }
}

// Every intra block is in the order once, and every intra block whose samples its available
// references read has a lower level (found here from the blocks' positions, not the stage's map).
void check_levels(const testing::IntraCase& ic, const IntraOrder& order) {
  const TuRecords& tu = ic.tu;
  std::vector<std::int64_t> level(tu.size(), -1);
  for (std::size_t l = 0; l < order.levels(); ++l)
    for (std::uint32_t k = order.begin[l]; k < order.begin[l + 1]; ++k) {
      ASSERT_LT(order.tu[k], tu.size());
      ASSERT_EQ(level[order.tu[k]], -1) << "TU " << order.tu[k] << " twice";
      level[order.tu[k]] = static_cast<std::int64_t>(l);
    }
  std::array<std::vector<std::int64_t>, 3> owner;  // per sample: the intra TU there, or -1
  for (int c = 0; c < ic.planes; ++c) owner[c].assign(ic.plane_size(c), -1);
  for (std::size_t t = 0; t < tu.size(); ++t) {
    if (!(tu.flags[t] & kTuIntra)) continue;
    ASSERT_NE(level[t], -1) << "intra TU " << t << " missing";
    const int c = tu.comp[t], n = 1 << tu.log2[t];
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        owner[c][std::size_t(tu.y[t] + y) * ic.width[c] + tu.x[t] + x] =
            static_cast<std::int64_t>(t);
  }
  for (std::size_t t = 0; t < tu.size(); ++t) {
    if (!(tu.flags[t] & kTuIntra)) continue;
    const int c = tu.comp[t], n = 1 << tu.log2[t], x = tu.x[t], y = tu.y[t];
    auto check = [&](int sx, int sy) {
      const std::int64_t o = owner[c][std::size_t(sy) * ic.width[c] + sx];
      if (o >= 0) {
        ASSERT_LT(level[o], level[t]) << "TU " << t << " reads TU " << o;
      }
    };
    const int unit = avail_unit(c);
    for (int i = 0; i < 2 * n; ++i) {
      if ((tu.avail[t] >> (i / unit)) & 1) check(x - 1, y + i);
      if ((tu.avail[t] >> (kAvailTopShift + i / unit)) & 1) check(x + i, y - 1);
    }
    if (tu.flags[t] & kTuCorner) check(x - 1, y - 1);
  }
}

// intra_sample.hpp's references and samples equal the decoder's block code for every mode,
// size, bit depth, component and filter flag, on random planes and availability.
TEST(HevcIntraStage, SamplesMatchTheDecodersBlockPrediction) {
  sigpu::test::Rng rng{11};
  constexpr int kStride = 80;
  std::vector<std::uint16_t> plane(kStride * 80);
  std::uint16_t want[32 * 32];
  std::int32_t ref[4 * 32 + 1], block_ref[4 * 32 + 1], filtered[4 * 32 + 1];
  int strong = 0;
  for (int bit_depth : {8, 10, 12})
    for (int comp = 0; comp < 2; ++comp)
      for (int log2 = 2; log2 <= (comp ? 4 : 5); ++log2)
        for (int mode = 0; mode < 35; ++mode)
          for (int flags = 0; flags < 4; ++flags)
            for (int rep = 0; rep < 2; ++rep) {
              SCOPED_TRACE(twin::label("depth", bit_depth, "comp", comp, "log2", log2, "mode", mode,
                                       "flags", flags, "rep", rep));
              const int max = (1 << bit_depth) - 1, n = 1 << log2;
              // Flat planes (strong smoothing) or noise.
              const bool flat = rng.below(2);
              const int base = static_cast<int>(rng.below(static_cast<unsigned>(max) + 1));
              for (std::uint16_t& s : plane)
                s = static_cast<std::uint16_t>(
                    flat ? std::min(max, base + static_cast<int>(rng.below(3)))
                         : static_cast<int>(rng.below(static_cast<unsigned>(max) + 1)));
              const int unit = avail_unit(comp), units = 2 * n / unit;
              const std::uint32_t all = (1u << units) - 1;
              const unsigned kind = rng.below(4);  // all, none, random, random runs
              std::uint32_t left = all, top = all;
              bool corner = true;
              if (kind == 1) {
                left = top = 0;
                corner = false;
              } else if (kind >= 2) {
                left = static_cast<std::uint32_t>(rng.next()) & all;
                top = static_cast<std::uint32_t>(rng.next()) & all;
                corner = rng.below(2);
              }
              IntraTu tu{8,
                         8,
                         log2,
                         comp,
                         mode,
                         kTuIntra | (corner ? kTuCorner : 0),
                         left | top << kAvailTopShift};
              gather_intra_refs(plane.data(), kStride, tu.x, tu.y, log2, unit, tu.avail, corner,
                                bit_depth, block_ref);
              const IntraRefUnits units_of = intra_ref_units(tu);
              for (int k = 0; k <= 4 * n; ++k)
                ref[k] = intra_ref_sample(tu, units_of, k, plane.data(), kStride, bit_depth);
              ASSERT_TRUE(twin::equal(std::span(block_ref, 4 * n + 1), std::span(ref, 4 * n + 1)));

              IntraStageParams p;
              p.bit_depth[comp] = bit_depth;
              p.filter_refs = flags & 1;
              p.strong_smoothing = flags & 2;
              IntraParams bp;
              bp.log2 = log2;
              bp.mode = mode;
              bp.luma = comp == 0;
              bp.filter_refs = p.filter_refs;
              bp.strong_smoothing = p.strong_smoothing;
              bp.bit_depth = bit_depth;
              for (bool simd : {false, true}) {
                std::copy_n(ref, 4 * n + 1, block_ref);
                bp.use_simd = simd;
                intra_predict(block_ref, bp, want, 32);
                const IntraFilter f = intra_filter(tu, p, ref);
                strong += f == IntraFilter::strong;
                for (int k = 0; k <= 4 * n; ++k) filtered[k] = intra_filtered_ref(ref, k, n, f);
                const IntraBlock b = intra_block(tu, p, filtered);
                for (int y = 0; y < n; ++y)
                  for (int x = 0; x < n; ++x)
                    ASSERT_EQ(intra_predict_sample(b, x, y), want[y * 32 + x])
                        << "x " << x << " y " << y << " simd " << simd;
              }
            }
  EXPECT_GT(strong, 0) << "strong intra smoothing never applied";
}

TEST(HevcIntraStage, RefusesRecordsOutsideThePicture) {
  const auto ic = testing::random_intra_case(1);
  IntraOrder order;
  EXPECT_NO_THROW(order_intra_tus(ic.tu, ic.width[0], ic.height[0], ic.params, order));
  EXPECT_THROW(order_intra_tus(ic.tu, ic.width[0], ic.height[0] - 8, ic.params, order),
               DecodeError);
  auto bad = ic.tu;
  const auto first =
      std::find_if(bad.flags.begin(), bad.flags.end(), [](std::uint8_t f) { return f & kTuIntra; });
  ASSERT_NE(first, bad.flags.end());
  const std::size_t t = static_cast<std::size_t>(first - bad.flags.begin());
  bad.avail[t] |= 1;  // a left reference
  bad.x[t] = 0;
  EXPECT_THROW(order_intra_tus(bad, ic.width[0], ic.height[0], ic.params, order), DecodeError);
  bad = ic.tu;
  bad.mode[t] = 35;
  EXPECT_THROW(order_intra_tus(bad, ic.width[0], ic.height[0], ic.params, order), DecodeError);
  IntraStageParams p = ic.params;
  p.chroma_format = 2;
  EXPECT_THROW(order_intra_tus(ic.tu, ic.width[0], ic.height[0], p, order), Unsupported);
}

TEST(HevcIntraStage, EmulatedKernelMatchesCpuOnRandomBlocks) {
  for (std::uint64_t seed : twin::seeds({1, 2, 3, 4, 5, 6})) {
    const auto ic = testing::random_intra_case(seed);
    const IntraOrder order = testing::intra_order(ic);
    check_levels(ic, order);
    check_emulated(ic, testing::cpu_intra(ic, order));
  }
}

// From the decoder's reconstruction with every intra block garbage, the twin (the residual
// stage's planes added) rebuilds the decoder's samples; the kernel under the emulation the same.
TEST(HevcIntraStage, CpuTwinRebuildsX265Pictures) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  const auto cases = testing::intra_stream_cases();
  EXPECT_EQ(cases.size(), 15u);
  std::size_t intra_in_inter = 0, k = 0;
  bool mono = false, constrained = false;
  for (const auto& ic : cases) {
    SCOPED_TRACE(ic.name);
    const IntraOrder order = testing::intra_order(ic);
    check_levels(ic, order);
    EXPECT_GT(order.tu.size(), 0u);
    const bool inter = ic.name.find("picture 1") == std::string::npos;
    if (inter) intra_in_inter += order.tu.size();
    mono |= ic.planes == 1;
    constrained |= ic.constrained_intra_pred && inter && !order.tu.empty();
    const auto got = testing::cpu_intra(ic, order);
    for (int c = 0; c < ic.planes; ++c) {
      SCOPED_TRACE(twin::label("plane", c));
      EXPECT_TRUE(twin::equal(ic.want[c], got[c]));
    }
    // The emulation runs a thread per CUDA thread: on every third picture only.
    if (k++ % 3 == 0) check_emulated(ic, got);
  }
  EXPECT_GT(intra_in_inter, 0u) << "no intra blocks in the inter pictures";
  EXPECT_TRUE(mono);
  EXPECT_TRUE(constrained) << "no intra blocks under constrained_intra_pred_flag";
}

}  // namespace
}  // namespace sigpu::hevc
