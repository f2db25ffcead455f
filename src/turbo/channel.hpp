// The channel's arithmetic per symbol, shared by the CPU (channel.cpp) and the GPU
// (cuda/channel_kernel.cuh), so that both give the same LLRs for the same (seed, frame, bit):
// the same IEEE operations in the same order, and no multiply-add the device compiler could
// fuse (it would round once where the host rounds twice).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::turbo {

SIGPU_HD SIGPU_FORCEINLINE double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
SIGPU_HD SIGPU_FORCEINLINE double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// Noise standard deviation per real dimension for unit-energy symbols: Eb/N0 (linear) per
/// information bit at rate K / (3K + 12), bits_per_symbol 1 (BPSK) or 2 (QPSK).
SIGPU_HD inline double channel_sigma(int K, double ebn0, double bits_per_symbol) {
  const double rate = static_cast<double>(K) / (3.0 * K + 12.0);
  const double n0 = 1.0 / (bits_per_symbol * rate * ebn0);
  return sqrt(n0 / 2.0);
}

/// What every symbol of a code block shares: amplitude per real dimension, noise sigma and the
/// LLR scale 2 amp / sigma^2, for Eb/N0 (linear) ebn0.
struct ChannelSymbol {
  double amp, sigma, scale;
};
SIGPU_HD inline ChannelSymbol channel_symbol(int K, double ebn0, bool qpsk) {
  ChannelSymbol c;
  c.amp = qpsk ? sqrt(0.5) : 1.0;
  c.sigma = channel_sigma(K, ebn0, qpsk ? 2.0 : 1.0);
  c.scale = 2.0 * c.amp / (c.sigma * c.sigma);
  return c;
}

/// LLR of a code bit sent with amplitude amp (bit 0 as +amp) and received with noise sigma * g:
/// scale * y with scale = 2 amp / sigma^2.
SIGPU_HD SIGPU_FORCEINLINE float channel_llr(double amp, double sigma, double scale,
                                             std::uint8_t bit, double g) {
  const double y = add_rn(mul_rn(amp, 1.0 - 2.0 * bit), mul_rn(sigma, g));
  return static_cast<float>(mul_rn(scale, y));
}

/// Fixed point: round(llr * s) (ties to even), saturated to +-(2^(bits - 1) - 1).
template <typename T>
SIGPU_HD SIGPU_FORCEINLINE T quantize_llr(float llr, float s) {
  constexpr float kMax = static_cast<float>((1 << (sizeof(T) * 8 - 1)) - 1);
  const float q = rintf(llr * s);
  return static_cast<T>(q < -kMax ? -kMax : (q > kMax ? kMax : q));
}

}  // namespace sigpu::turbo
