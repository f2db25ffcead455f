// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator, so the channel noise of bit j of frame f under seed s is a pure
// function of (s, f, j) and the CPU and the GPU can draw it in any order.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::turbo {

struct Philox4 {
  std::uint32_t v[4];
};

SIGPU_HD SIGPU_FORCEINLINE void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi,
                                               std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

SIGPU_HD inline Philox4 philox4x32_10(Philox4 c, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, c.v[0], hi0, lo0);
    philox_mulhilo(0xCD9E8D57u, c.v[2], hi1, lo1);
    c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
  }
  return c;
}

/// Two uniforms -> two independent standard normals (Box-Muller, in double).
/// Gaussian numbers 2 pair and 2 pair + 1 of frame f: counter (pair, 0, f lo, f hi), key
/// (seed lo, seed hi); the cosine branch gives the even one, the sine branch the odd one.
SIGPU_HD inline void channel_gaussian_pair(std::uint64_t seed, std::uint64_t frame,
                                           std::uint64_t pair, double& even, double& odd) {
  const Philox4 r = philox4x32_10(
      Philox4{{static_cast<std::uint32_t>(pair), static_cast<std::uint32_t>(pair >> 32),
               static_cast<std::uint32_t>(frame), static_cast<std::uint32_t>(frame >> 32)}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const double u1 = (static_cast<double>(r.v[0]) + 1.0) * 2.3283064365386963e-10;  // (0, 1]
  const double u2 = static_cast<double>(r.v[1]) * 2.3283064365386963e-10;          // [0, 1)
  const double radius = sqrt(-2.0 * log(u1));
  const double angle = 6.283185307179586 * u2;
  even = radius * cos(angle);
  odd = radius * sin(angle);
}

/// Gaussian number j of frame f (see channel_gaussian_pair).
SIGPU_HD inline double channel_gaussian(std::uint64_t seed, std::uint64_t frame, std::uint64_t j) {
  double even, odd;
  channel_gaussian_pair(seed, frame, j >> 1, even, odd);
  return (j & 1) ? odd : even;
}

}  // namespace sigpu::turbo
