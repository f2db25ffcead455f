// QPSK, 16QAM and 64QAM with the Gray mapping of 36.211 7.1 (Tables 7.1.2-1, 7.1.3-1, 7.1.4-1)
// and max-log demapping, for the transport block simulation.
//
// In each table the bits b(i), b(i+2), b(i+4) of a symbol set its I component and b(i+1),
// b(i+3), b(i+5) its Q component, the same way: with m bits c0 c1 c2 per component the level
// is (1 - 2 c0) (1 + 2 c1) for 16QAM and (1 - 2 c0) (4 - (1 - 2 c1) (2 - (1 - 2 c2))) for 64QAM
// (odd integers), scaled by 1 / sqrt(2), 1 / sqrt(10), 1 / sqrt(42) to unit mean energy.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <span>

namespace sigpu::turbo {

/// Bits per component for Q_m = 2, 4, 6.
inline int component_bits(int Q_m) {
  return Q_m / 2;
}

/// The integer level of one component from its m bits c[0..m).
inline int component_level(const std::uint8_t* c, int m) {
  const int s0 = 1 - 2 * c[0];
  if (m == 1) return s0;
  if (m == 2) return s0 * (1 + 2 * c[1]);
  return s0 * (4 - (1 - 2 * c[1]) * (2 - (1 - 2 * c[2])));
}

/// 1 / sqrt(mean energy) of the constellation.
inline double constellation_scale(int Q_m) {
  return Q_m == 2 ? 1.0 / std::sqrt(2.0)
                  : (Q_m == 4 ? 1.0 / std::sqrt(10.0) : 1.0 / std::sqrt(42.0));
}

/// Symbol of Q_m bits b[0..Q_m).
inline std::complex<double> modulate(const std::uint8_t* b, int Q_m) {
  const int m = component_bits(Q_m);
  std::uint8_t ci[3] = {}, cq[3] = {};
  for (int j = 0; j < m; ++j) {
    ci[j] = b[2 * j];
    cq[j] = b[2 * j + 1];
  }
  const double s = constellation_scale(Q_m);
  return {s * component_level(ci, m), s * component_level(cq, m)};
}

/// Max-log LLRs log P(b = 0) / P(b = 1) of the Q_m bits of a symbol received as y = h x + n
/// with complex noise of variance N0 (N0 / 2 per component), h known:
/// (min over b = 1 of |y - h x|^2 - min over b = 0) / N0. Each component is searched alone
/// (its bits set it alone): |y - h x|^2 = |h|^2 |y / h - x|^2.
inline void demap_max_log(std::complex<double> y, std::complex<double> h, double N0, int Q_m,
                          double* llr) {
  const int m = component_bits(Q_m), levels = 1 << m;
  const double g = std::norm(h), s = constellation_scale(Q_m);
  const std::complex<double> z = g > 0 ? y / h : std::complex<double>(0, 0);
  for (int comp = 0; comp < 2; ++comp) {
    const double v = comp == 0 ? z.real() : z.imag();
    double best[3][2];
    for (int j = 0; j < m; ++j) best[j][0] = best[j][1] = std::numeric_limits<double>::infinity();
    for (int x = 0; x < levels; ++x) {
      std::uint8_t c[3] = {};
      for (int j = 0; j < m; ++j) c[j] = static_cast<std::uint8_t>((x >> j) & 1);
      const double d = v - s * component_level(c, m), d2 = d * d;
      for (int j = 0; j < m; ++j) best[j][c[j]] = std::min(best[j][c[j]], d2);
    }
    for (int j = 0; j < m; ++j) llr[2 * j + comp] = g * (best[j][1] - best[j][0]) / N0;
  }
}

}  // namespace sigpu::turbo
