// Fractional sample interpolation against the equations of 8.5.3.3.3.1 (luma) and 8.5.3.3.3.2
// (chroma) written out here one sample at a time: every fraction, block sizes from 2 to 64,
// blocks inside the reference and reaching over each of its edges, 8 and 10 bits; the block
// filters of the CPU decoder (interpolate) and the inter stage's one sample at a time
// (interpolate_sample, inter_sample.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hevc/inter_pred.hpp"

namespace sigpu::hevc {
namespace {

// Table 8-11 (fL) and Table 8-12 (fC), by fractional position.
const int kLuma[4][8] = {{0, 0, 0, 64, 0, 0, 0, 0},
                         {-1, 4, -10, 58, 17, -5, 1, 0},
                         {-1, 4, -11, 40, 40, -11, 4, -1},
                         {0, 1, -5, 17, 58, -10, 4, -1}};
const int kChroma[8][4] = {{0, 64, 0, 0},    {-2, 58, 10, -2}, {-4, 54, 16, -2}, {-6, 46, 28, -4},
                           {-4, 36, 36, -4}, {-4, 28, 46, -6}, {-2, 16, 54, -4}, {-2, 10, 58, -2}};

struct Ref {
  int width, height;
  std::vector<std::uint16_t> samples;
  int at(int x, int y) const {  // refPicLX[Clip3(0, w - 1, x)][Clip3(0, h - 1, y)]
    return samples[static_cast<std::size_t>(std::clamp(y, 0, height - 1)) * width +
                   std::clamp(x, 0, width - 1)];
  }
};

// predSampleLX of the sample at (xInt, yInt) + (xFrac, yFrac), one sample at a time.
int spec_sample(const Ref& r, bool luma, int xInt, int yInt, int xFrac, int yFrac, int bit_depth) {
  const int taps = luma ? 8 : 4, before = taps / 2 - 1;
  const int shift1 = std::min(4, bit_depth - 8), shift2 = 6, shift3 = 14 - bit_depth;
  auto coef = [&](int frac, int i) { return luma ? kLuma[frac][i] : kChroma[frac][i]; };
  auto horizontal = [&](int y) {
    int sum = 0;
    for (int i = 0; i < taps; ++i) sum += coef(xFrac, i) * r.at(xInt + i - before, y);
    return sum >> shift1;
  };
  if (xFrac == 0 && yFrac == 0) return r.at(xInt, yInt) << shift3;
  if (yFrac == 0) return horizontal(yInt);
  if (xFrac == 0) {
    int sum = 0;
    for (int i = 0; i < taps; ++i) sum += coef(yFrac, i) * r.at(xInt, yInt + i - before);
    return sum >> shift1;
  }
  int sum = 0;
  for (int i = 0; i < taps; ++i) sum += coef(yFrac, i) * horizontal(yInt + i - before);
  return sum >> shift2;
}

TEST(HevcInterpolation, MatchesTheSpecSampleBySample) {
  std::mt19937 rng(7);
  for (int bit_depth : {8, 10}) {
    Ref r{37, 29, {}};
    std::uniform_int_distribution<int> sample(0, (1 << bit_depth) - 1);
    r.samples.resize(static_cast<std::size_t>(r.width) * r.height);
    for (auto& s : r.samples) s = static_cast<std::uint16_t>(sample(rng));
    const RefPlane plane{r.samples.data(), r.width, r.width, r.height};
    for (bool luma : {true, false}) {
      const int fractions = luma ? 4 : 8;
      for (int w : {2, 4, 8, 12, 16, 24, 32, 64})
        for (int h : {2, 4, 8, 16, 64}) {
          if (luma && (w < 4 || h < 4)) continue;
          // Inside the reference, over each edge, and wholly outside it.
          for (auto [x, y] :
               {std::pair{4, 4}, std::pair{-3, 5}, std::pair{r.width - w + 2, 3}, std::pair{5, -2},
                std::pair{2, r.height - h + 3}, std::pair{-w - 5, r.height + 2}})
            for (int fx = 0; fx < fractions; ++fx)
              for (int fy = 0; fy < fractions; ++fy) {
                std::vector<std::int16_t> got(static_cast<std::size_t>(w) * h);
                interpolate(plane, x, y, fx, fy, w, h, luma, bit_depth, got.data());
                for (int j = 0; j < h; ++j)
                  for (int i = 0; i < w; ++i) {
                    const int want = spec_sample(r, luma, x + i, y + j, fx, fy, bit_depth);
                    ASSERT_EQ(got[static_cast<std::size_t>(j) * w + i], want)
                        << (luma ? "luma" : "chroma") << " " << bit_depth << " bit, " << w << "x"
                        << h << " at (" << x << ", " << y << ") frac (" << fx << ", " << fy
                        << "), sample (" << i << ", " << j << ")";
                    // The inter stage's per-sample code (host and device) as well.
                    const int one =
                        luma ? interpolate_sample<8>(plane, x + i, y + j, fx, fy, bit_depth)
                             : interpolate_sample<4>(plane, x + i, y + j, fx, fy, bit_depth);
                    ASSERT_EQ(one, want) << "interpolate_sample, " << (luma ? "luma" : "chroma")
                                         << " " << bit_depth << " bit, frac (" << fx << ", " << fy
                                         << ") at (" << x + i << ", " << y + j << ")";
                  }
              }
        }
    }
  }
}

}  // namespace
}  // namespace sigpu::hevc
