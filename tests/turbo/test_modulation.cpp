// The transport block simulation's modulation: Gray mapping against rows of 36.211 Tables
// 7.1.2-1, 7.1.3-1 and 7.1.4-1 copied here, and max-log demapping against a search over the
// whole constellation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "turbo/modulation.hpp"

namespace turbo = sigpu::turbo;

namespace {

std::vector<std::uint8_t> bits_of(int value, int n) {
  std::vector<std::uint8_t> b(n);
  for (int i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((value >> (n - 1 - i)) & 1);
  return b;
}

void expect_symbol(int value, int Q_m, int I, int Q, double scale) {
  const auto b = bits_of(value, Q_m);
  const auto x = turbo::modulate(b.data(), Q_m);
  EXPECT_NEAR(x.real(), I * scale, 1e-12) << "bits " << value << " Q_m " << Q_m;
  EXPECT_NEAR(x.imag(), Q * scale, 1e-12) << "bits " << value << " Q_m " << Q_m;
}

}  // namespace

TEST(TurboModulation, GrayMappingMatchesSpecTables) {
  // Table 7.1.2-1.
  const double q = 1 / std::sqrt(2.0);
  expect_symbol(0b00, 2, 1, 1, q);
  expect_symbol(0b01, 2, 1, -1, q);
  expect_symbol(0b10, 2, -1, 1, q);
  expect_symbol(0b11, 2, -1, -1, q);
  // Table 7.1.3-1, every row.
  const int qam16[16][2] = {{1, 1},   {1, 3},   {3, 1},   {3, 3},  {1, -1}, {1, -3},
                            {3, -1},  {3, -3},  {-1, 1},  {-1, 3}, {-3, 1}, {-3, 3},
                            {-1, -1}, {-1, -3}, {-3, -1}, {-3, -3}};
  for (int v = 0; v < 16; ++v) expect_symbol(v, 4, qam16[v][0], qam16[v][1], 1 / std::sqrt(10.0));
  // Table 7.1.4-1: the first 16 rows; b(i) and b(i+1) flip the signs of I and Q in the others.
  const int qam64[16][2] = {{3, 3}, {3, 1}, {1, 3}, {1, 1}, {3, 5}, {3, 7}, {1, 5}, {1, 7},
                            {5, 3}, {5, 1}, {7, 3}, {7, 1}, {5, 5}, {5, 7}, {7, 5}, {7, 7}};
  for (int v = 0; v < 64; ++v) {
    const int sI = (v >> 5) & 1 ? -1 : 1, sQ = (v >> 4) & 1 ? -1 : 1;
    expect_symbol(v, 6, sI * qam64[v & 15][0], sQ * qam64[v & 15][1], 1 / std::sqrt(42.0));
  }
}

// Unit mean energy, and max-log LLRs equal to the search over all 2^Q_m symbols.
TEST(TurboModulation, MaxLogDemappingMatchesFullSearch) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int Q_m : {2, 4, 6}) {
    const int M = 1 << Q_m;
    std::vector<std::complex<double>> points(M);
    double energy = 0;
    for (int v = 0; v < M; ++v) {
      const auto b = bits_of(v, Q_m);
      points[v] = turbo::modulate(b.data(), Q_m);
      energy += std::norm(points[v]);
    }
    EXPECT_NEAR(energy / M, 1.0, 1e-12) << "Q_m " << Q_m;
    for (int trial = 0; trial < 200; ++trial) {
      const std::complex<double> h(n(rng), n(rng));
      const double N0 = 0.05 + 0.5 * (trial % 7);
      const int sent = trial % M;
      const std::complex<double> y =
          h * points[sent] + std::sqrt(N0 / 2) * std::complex<double>(n(rng), n(rng));
      double llr[6];
      turbo::demap_max_log(y, h, N0, Q_m, llr);
      for (int j = 0; j < Q_m; ++j) {
        double best[2] = {std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::infinity()};
        for (int v = 0; v < M; ++v) {
          const int bit = (v >> (Q_m - 1 - j)) & 1;
          best[bit] = std::min(best[bit], std::norm(y - h * points[v]));
        }
        const double want = (best[1] - best[0]) / N0;
        EXPECT_NEAR(llr[j], want, 1e-9 * (1 + std::fabs(want))) << "Q_m " << Q_m << " bit " << j;
      }
    }
  }
}
