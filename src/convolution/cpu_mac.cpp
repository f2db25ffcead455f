#include "convolution/cpu_mac.hpp"

#include "convolution/spectral.hpp"

namespace sigpu::convolution {

// The build targets baseline x86-64 (the binaries run on other machines); an AVX2+FMA clone,
// picked at load time, doubles the width of this loop, which is most of the CPU's work.
#if defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
void mac_spectrum(float* __restrict yr, float* __restrict yi, const float* __restrict xr,
                  const float* __restrict xi, const float* __restrict hr,
                  const float* __restrict hi, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) complex_mac(yr[k], yi[k], xr[k], xi[k], hr[k], hi[k]);
}

}  // namespace sigpu::convolution
