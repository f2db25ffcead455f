// The per-bin arithmetic of partitioned convolution, written once for the CPU and the GPU.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::convolution {

/// Ring slot of the spectrum `age` periods older than the newest one (in slot `newest`), in a
/// ring of `slots` spectra; age < slots.
SIGPU_HD SIGPU_FORCEINLINE std::uint32_t ring_slot(std::uint32_t newest, std::uint32_t age,
                                                   std::uint32_t slots) {
  return newest >= age ? newest - age : newest + slots - age;
}

/// (yr, yi) += (xr, xi) * (hr, hi).
SIGPU_HD SIGPU_FORCEINLINE void complex_mac(float& yr, float& yi, float xr, float xi, float hr,
                                            float hi) {
  yr += xr * hr - xi * hi;
  yi += xr * hi + xi * hr;
}

}  // namespace sigpu::convolution
