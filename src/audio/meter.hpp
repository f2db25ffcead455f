// The bus meters' per-channel measure, on the CPU: the twin of cuda/meter_kernel.cuh.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace sigpu::audio {

/// The peak and the sum of squares of n samples, into out[0] and out[1].
inline void meter_channel(const float* x, std::size_t n, float* out) {
  float peak = 0, sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    peak = std::max(peak, std::abs(x[i]));
    sum += x[i] * x[i];
  }
  out[0] = peak;
  out[1] = sum;
}

}  // namespace sigpu::audio
