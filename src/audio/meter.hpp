// The bus meters' per-channel measure, on the CPU: the twin of cuda/meter_kernel.cuh.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace sigpu::audio {

/// The peak and the sum of squares of n samples, into out[0] and out[1]. Eight running lanes:
/// the compiler may not reorder one float sum, but eight independent ones become SIMD.
inline void meter_channel(const float* x, std::size_t n, float* out) {
  constexpr std::size_t kLanes = 8;
  float peak[kLanes] = {}, sum[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l) {
      peak[l] = std::max(peak[l], std::abs(x[i + l]));
      sum[l] += x[i + l] * x[i + l];
    }
  }
  for (std::size_t l = 0; l < kLanes && i + l < n; ++l) {
    peak[l] = std::max(peak[l], std::abs(x[i + l]));
    sum[l] += x[i + l] * x[i + l];
  }
  for (std::size_t l = 1; l < kLanes; ++l) {
    peak[0] = std::max(peak[0], peak[l]);
    sum[0] += sum[l];
  }
  out[0] = peak[0];
  out[1] = sum[0];
}

}  // namespace sigpu::audio
