// The CPU's inner loop: one partition's complex multiply-accumulate over split spectra.
#pragma once

#include <cstddef>

namespace sigpu::convolution {

/// Spectra on the CPU are split (re[stride], im[stride]); stride is a multiple of this.
inline constexpr std::size_t kCpuBinBlock = 8;

/// (yr, yi)[k] += (xr, xi)[k] * (hr, hi)[k] for k < n; n is a multiple of kCpuBinBlock.
void mac_spectrum(float* yr, float* yi, const float* xr, const float* xi, const float* hr,
                  const float* hi, std::size_t n);

}  // namespace sigpu::convolution
