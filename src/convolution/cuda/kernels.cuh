// The CUDA convolver's kernels, one per step of a period, and the launch functions the host
// driver calls (cuda_convolver.cpp). Each kernel is a thin loop over a helper of
// convolution/spectral.hpp; all sizes and tables come in as arguments, history state (the
// period counter) lives in device memory so that a captured graph stays valid.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "convolution/layout.hpp"

namespace sigpu::convolution::cuda {

/// The layout's tables in device memory.
struct DeviceTables {
  const std::uint32_t* output_begin = nullptr;
  const Term* terms = nullptr;
  const std::uint32_t* ir_partitions = nullptr;
  const std::uint64_t* ir_offset = nullptr;
  const std::uint32_t* ring_slots = nullptr;
  const std::uint64_t* ring_offset = nullptr;
};

/// Block shape of the multiply-accumulate: `tile` bins by `slices` partition slices (the
/// partial sums of the slices are added in shared memory).
struct MacShape {
  std::uint32_t tile = 0, slices = 0, tiles = 0;
};
inline constexpr std::uint32_t kMacBlock = 512;
MacShape mac_shape(std::uint32_t bins, std::uint32_t max_partitions);

/// window[i] = [window[i] second half, in[i]]: the overlap-save input of the period.
void launch_stage_input(float* window, const float* in, std::uint32_t inputs, std::uint32_t B,
                        cudaStream_t stream);

/// ring[i][count % ring_slots[i]] = current[i]: the newest spectrum into each delay line.
void launch_push_spectra(float2* ring, const float2* current, const DeviceTables& t,
                         const std::uint64_t* count, std::uint32_t inputs, std::uint32_t bins,
                         cudaStream_t stream);

/// y[o] = sum over o's paths and the IR's partitions of delayed input spectrum x IR spectrum.
void launch_mac(float2* y, const float2* ring, const float2* spectra, const DeviceTables& t,
                const std::uint64_t* count, std::uint32_t outputs, std::uint32_t bins,
                const MacShape& shape, cudaStream_t stream);

/// out[o] = wet * second half of result[o] + dry * window[o] second half; then ++*count.
void launch_finish(float* out, const float* result, const float* window, float wet, float dry,
                   std::uint32_t outputs, std::uint32_t B, std::uint64_t* count,
                   cudaStream_t stream);

/// frames[p] = [taps of partition first + p, scaled; zeros] for p < count, each 2B long.
void launch_pad_partitions(float* frames, const float* taps, std::size_t n_taps,
                           std::uint32_t first, std::uint32_t count, std::uint32_t B, float scale,
                           cudaStream_t stream);

}  // namespace sigpu::convolution::cuda
