// The bus meters on the GPU: one thread block per channel reduces the period to its peak and sum
// of squares (the twin of meter.hpp). Only shared memory and __syncthreads, so that the kernel
// also runs unchanged under tests/support/cuda_emulation.hpp.
#pragma once

#include <cmath>
#include <cstddef>

namespace sigpu::audio::cuda {

inline constexpr unsigned kMeterBlock = 128;

struct MeterArgs {
  const float* channels;  ///< channel c at channels + c * n
  float* out;             ///< per channel: peak, sum of squares
  int n;
};

// static: the CPU emulation test defines its own copy beside the library's.
static __global__ void __launch_bounds__(kMeterBlock) meter_kernel(MeterArgs a) {
  __shared__ float peak[kMeterBlock], sum[kMeterBlock];
  const unsigned t = threadIdx.x;
  const float* x = a.channels + std::size_t(blockIdx.x) * a.n;
  float p = 0, s = 0;
  for (unsigned i = t; i < unsigned(a.n); i += kMeterBlock) {
    p = fmaxf(p, fabsf(x[i]));
    s += x[i] * x[i];
  }
  peak[t] = p;
  sum[t] = s;
  __syncthreads();
  for (unsigned half = kMeterBlock / 2; half > 0; half /= 2) {
    if (t < half) {
      peak[t] = fmaxf(peak[t], peak[t + half]);
      sum[t] += sum[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    a.out[2 * blockIdx.x] = peak[0];
    a.out[2 * blockIdx.x + 1] = sum[0];
  }
}

}  // namespace sigpu::audio::cuda
