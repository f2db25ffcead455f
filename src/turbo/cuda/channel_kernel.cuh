// The AWGN channel on the GPU: the LLRs of a batch of codewords, made where the decoder reads
// them. Every value is channel.hpp's and philox.hpp's arithmetic, as on the CPU (awgn_llrs,
// quantize), so a simulation sees the same noise on either.
#pragma once

#include <cstdint>

#include "turbo/channel.hpp"
#include "turbo/map_decoder.hpp"
#include "turbo/philox.hpp"

namespace sigpu::turbo::cuda {

inline constexpr int kChannelThreads = 256;

/// Code block blockIdx.y, symbol pairs blockIdx.x * blockDim.x + threadIdx.x: codeword bits
/// code[llr_offset + j] to llr[llr_offset + j] as frame first_frame + blockIdx.y. T: float, or
/// int16/int8 quantised with scale s (2^frac_bits).
template <typename T>
__global__ void __launch_bounds__(kChannelThreads)
    ChannelKernel(const BlockDesc* __restrict__ blocks, const std::uint8_t* __restrict__ code,
                  T* llr, double ebn0, bool qpsk, std::uint64_t seed, std::uint64_t first_frame,
                  float s) {
  const BlockDesc d = blocks[blockIdx.y];
  const std::uint32_t n = 3u * static_cast<std::uint32_t>(d.K) + 12u;
  const std::uint32_t j = 2u * (blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= n) return;
  const ChannelSymbol cs = channel_symbol(d.K, ebn0, qpsk);
  double g[2];
  channel_gaussian_pair(seed, first_frame + blockIdx.y, j >> 1, g[0], g[1]);
  for (std::uint32_t m = j; m < j + 2 && m < n; ++m) {
    const float v = channel_llr(cs.amp, cs.sigma, cs.scale, code[d.llr_offset + m], g[m - j]);
    if constexpr (sizeof(T) == sizeof(float))
      llr[d.llr_offset + m] = v;
    else
      llr[d.llr_offset + m] = quantize_llr<T>(v, s);
  }
}

}  // namespace sigpu::turbo::cuda
