// MetricPair (16-bit metric halves, the pair kernel's arithmetic) through the shared trellis
// functions against the int32 metrics of the CPU decoders, on the host's plain twin of its
// arithmetic: the same metrics and extrinsics for int8 inputs at their extremes, where the
// bound of metric_pair.hpp is tight. The GPU kernel itself is checked in test_gpu.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "turbo/map_decoder.hpp"
#include "turbo/metric_pair.hpp"

namespace turbo = sigpu::turbo;
using turbo::MetricPair;

namespace {

constexpr int kSteps = 4096;  // a multiple of kNormEvery

// Inputs of one trellis step: A = Ls + La (|Ls| <= 128, |La| <= 127), Lp. extreme: only the
// largest magnitudes, the case the bound is for.
struct Step {
  std::int32_t A, Lp;
};
Step draw(std::mt19937& rng, bool extreme) {
  std::uniform_int_distribution<int> ls(-128, 127), la(-127, 127), lp(-128, 127), sign(0, 1);
  if (extreme) return {sign(rng) ? 255 : -255, sign(rng) ? 127 : -128};
  return {ls(rng) + la(rng), lp(rng)};
}

}  // namespace

TEST(TurboMetricPair, TrellisOnPairsEqualsInt32ForInt8Inputs) {
  constexpr std::int32_t kNeg = turbo::FixedTraits<std::int8_t>::kNeg;
  std::mt19937 rng(7);
  std::int32_t widest = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const bool extreme = trial % 2 == 0;
    std::vector<Step> s0(kSteps), s1(kSteps);
    for (auto& s : s0) s = draw(rng, extreme);
    for (auto& s : s1) s = draw(rng, extreme);
    // Sub-decoder 0 from the trellis start, 1 from uniform metrics; forward with the decoders'
    // normalisation rule, every alpha kept.
    std::int32_t a0[8], a1[8];
    MetricPair ap[8];
    for (int s = 0; s < 8; ++s) {
      a0[s] = s == 0 ? 0 : kNeg;
      a1[s] = 0;
      ap[s] = MetricPair::pack(s == 0 ? 0 : MetricPair::kNeg16, 0);
    }
    std::vector<std::array<std::int32_t, 8>> rows0(kSteps), rows1(kSteps);
    std::vector<std::array<MetricPair, 8>> rowsp(kSteps);
    for (int k = 0; k < kSteps; ++k) {
      std::copy(a0, a0 + 8, rows0[k].begin());
      std::copy(a1, a1 + 8, rows1[k].begin());
      std::copy(ap, ap + 8, rowsp[k].begin());
      const MetricPair A = MetricPair::pack(s0[k].A, s1[k].A);
      const MetricPair Lp = MetricPair::pack(s0[k].Lp, s1[k].Lp);
      turbo::forward_step_to<false>(a0, s0[k].A, s0[k].Lp, k + 1, kSteps);
      turbo::forward_step_to<false>(a1, s1[k].A, s1[k].Lp, k + 1, kSteps);
      turbo::forward_step_to<false>(ap, A, Lp, k + 1, kSteps);
      for (int s = 0; s < 8; ++s) {
        if (k >= 2) {
          ASSERT_EQ(ap[s].lo(), a0[s]) << "alpha, step " << k << " state " << s;
        }
        ASSERT_EQ(ap[s].hi(), a1[s]) << "alpha, step " << k << " state " << s;
        widest = std::max({widest, std::abs(a0[s]) * (k >= 2), std::abs(a1[s])});
      }
    }
    // Backward from uniform metrics with the extrinsics, normalised as the decoders do.
    std::int32_t b0[8] = {}, b1[8] = {};
    MetricPair bp[8];
    for (int k = kSteps - 1; k >= 0; --k) {
      const MetricPair A = MetricPair::pack(s0[k].A, s1[k].A);
      const MetricPair Lp = MetricPair::pack(s0[k].Lp, s1[k].Lp);
      const std::int32_t l0 = turbo::backward_extrinsic_to<false>(
          b0, [&](int s) { return rows0[k][s]; }, s0[k].A, s0[k].Lp, k);
      const std::int32_t l1 = turbo::backward_extrinsic_to<false>(
          b1, [&](int s) { return rows1[k][s]; }, s1[k].A, s1[k].Lp, k);
      const MetricPair lp = turbo::backward_extrinsic_to<false>(
          bp, [&](int s) { return rowsp[k][s]; }, A, Lp, k);
      ASSERT_EQ(lp.lo(), l0) << "extrinsic, step " << k;
      ASSERT_EQ(lp.hi(), l1) << "extrinsic, step " << k;
      for (int s = 0; s < 8; ++s) {
        ASSERT_EQ(bp[s].lo(), b0[s]) << "beta, step " << k << " state " << s;
        ASSERT_EQ(bp[s].hi(), b1[s]) << "beta, step " << k << " state " << s;
        widest = std::max({widest, std::abs(b0[s]), std::abs(b1[s])});
      }
    }
  }
  // The metrics came near the bound of metric_pair.hpp (5,362), so the test reached the
  // magnitudes it is about, and stayed within it.
  EXPECT_GT(widest, 2000);
  EXPECT_LE(widest, 5362);
}

TEST(TurboMetricPair, HalvesWrapAndNegateIndependently) {
  const MetricPair a = MetricPair::pack(-1, 32767), b = MetricPair::pack(1, 1);
  const MetricPair s = a + b;
  EXPECT_EQ(s.lo(), 0);  // no carry into the high half
  EXPECT_EQ(s.hi(), -32768);
  const MetricPair n = -MetricPair::pack(0, -5);
  EXPECT_EQ(n.lo(), 0);  // ~0 + 1 carries out of the low half only
  EXPECT_EQ(n.hi(), 5);
  const MetricPair m = MetricPair::max(MetricPair::pack(-3, 4), MetricPair::pack(2, -9));
  EXPECT_EQ(m.lo(), 2);
  EXPECT_EQ(m.hi(), 4);
}
