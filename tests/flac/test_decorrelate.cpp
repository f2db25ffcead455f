// decorrelated_pair, the GPU restore's branch-free stereo decorrelation, against its plain twin
// decorrelated_sample in every channel assignment, on values across the int32 range.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "flac/frame.hpp"

namespace sigpu::flac {
namespace {

/// check(assignment, a, b) over every channel assignment (and two that are none) and 20,000
/// pairs each: a quarter of the values from `edges`, the rest random of every magnitude.
template <std::size_t N, typename Check>
void for_random_pairs(unsigned seed, const std::array<std::int32_t, N>& edges, Check&& check) {
  std::mt19937_64 rng(seed);
  for (unsigned assignment :
       {0u, 1u, 5u, unsigned{kLeftSide}, unsigned{kSideRight}, unsigned{kMidSide}})
    for (int round = 0; round < 20000; ++round) {
      std::int32_t x[2];
      for (auto& v : x) {
        const auto r = rng();
        v = r % 4 == 0 ? edges[r / 4 % edges.size()]
                       : static_cast<std::int32_t>(r >> 32) >> (r % 24);
      }
      check(assignment, x);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(FlacDecorrelate, PairMatchesSampleByChannel) {
  const std::array<std::int32_t, 7> edges{0,          1,          -1, 0x7FFFFFFF, -0x7FFFFFFF - 1,
                                          0x3FFFFFFF, -0x40000000};
  for_random_pairs(7, edges, [](unsigned assignment, const std::int32_t(&x)[2]) {
    std::int32_t left = 0, right = 0;
    decorrelated_pair(assignment, x[0], x[1], left, right);
    ASSERT_EQ(left, decorrelated_sample(assignment, x, 1, 0, 0))
        << assignment << ": " << x[0] << ", " << x[1];
    ASSERT_EQ(right, decorrelated_sample(assignment, x, 1, 0, 1))
        << assignment << ": " << x[0] << ", " << x[1];
  });
}

// The 32-bit sums of the narrow GPU restore's s16 stores: exact for values of up to 30 bits,
// and the low 31 bits exact for any.
TEST(FlacDecorrelate, NarrowSumsMatchTheWideOnes) {
  constexpr std::int32_t kTop = (1 << 29) - 1, kBottom = -(1 << 29);
  const std::array<std::int32_t, 8> edges{0,       1,          -1,       kTop,
                                          kBottom, 0x7FFFFFFF, kTop - 1, -0x7FFFFFFF - 1};
  for_random_pairs(11, edges, [&](unsigned assignment, const std::int32_t(&x)[2]) {
    std::int32_t left = 0, right = 0, wide_left = 0, wide_right = 0;
    decorrelated_pair<std::int32_t>(assignment, x[0], x[1], left, right);
    decorrelated_pair(assignment, x[0], x[1], wide_left, wide_right);
    const auto fits = [&](std::int32_t v) { return v >= kBottom && v <= kTop; };
    const std::uint32_t mask = fits(x[0]) && fits(x[1]) ? ~0u : 0x7FFFFFFFu;
    ASSERT_EQ((static_cast<std::uint32_t>(left ^ wide_left) & mask), 0u)
        << assignment << ": " << x[0] << ", " << x[1];
    ASSERT_EQ((static_cast<std::uint32_t>(right ^ wide_right) & mask), 0u)
        << assignment << ": " << x[0] << ", " << x[1];
  });
}

}  // namespace
}  // namespace sigpu::flac
