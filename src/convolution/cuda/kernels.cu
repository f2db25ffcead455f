#include <algorithm>

#include "convolution/cuda/kernels.cuh"
#include "convolution/spectral.hpp"
#include "core/cuda/check.hpp"

namespace sigpu::convolution::cuda {

namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

__global__ void stage_input_kernel(float* window, const float* __restrict__ in,
                                   std::uint32_t inputs, std::uint32_t B) {
  const std::size_t idx = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (idx >= std::size_t{inputs} * B) return;
  const std::size_t i = idx / B, n = idx % B;
  float* w = window + i * 2 * B;
  w[n] = w[B + n];
  w[B + n] = in[idx];
}

__global__ void push_spectra_kernel(float2* ring, const float2* __restrict__ current,
                                    DeviceTables t, const std::uint64_t* count,
                                    std::uint32_t inputs, std::uint32_t bins) {
  const std::size_t idx = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (idx >= std::size_t{inputs} * bins) return;
  const std::size_t i = idx / bins, k = idx % bins;
  const std::uint64_t slot = *count % t.ring_slots[i];
  ring[(t.ring_offset[i] + slot) * bins + k] = current[idx];
}

// One output bin's share of the sum: the partitions age = slice, slice + slices, ... of every
// path into output o. IR spectra are read once per period, so they are loaded evict-first
// (__ldcs) to leave L2 to the delay lines, which every path of an input reads.
__device__ float2 accumulate_output(const float2* __restrict__ ring,
                                    const float2* __restrict__ spectra, const DeviceTables& t,
                                    std::uint64_t count, std::uint32_t o, std::uint32_t bins,
                                    std::uint32_t k, std::uint32_t slice, std::uint32_t slices) {
  float2 acc = make_float2(0.0f, 0.0f);
  for (std::uint32_t q = t.output_begin[o]; q < t.output_begin[o + 1]; ++q) {
    const Term term = t.terms[q];
    const std::uint32_t parts = t.ir_partitions[term.ir];
    const std::uint32_t slots = t.ring_slots[term.input];
    const auto newest = static_cast<std::uint32_t>(count % slots);
    const float2* x = ring + t.ring_offset[term.input] * bins + k;
    const float2* h = spectra + t.ir_offset[term.ir] * bins + k;
#pragma unroll 4
    for (std::uint32_t age = slice; age < parts; age += slices) {
      const float2 xv = x[std::size_t{ring_slot(newest, age, slots)} * bins];
      const float2 hv = __ldcs(h + std::size_t{age} * bins);
      complex_mac(acc.x, acc.y, xv.x, xv.y, hv.x, hv.y);
    }
  }
  return acc;
}

// Block: blockDim.x bins (a tile) by blockDim.y slices of partitions; grid: outputs x tiles.
__global__ void __launch_bounds__(kMacBlock)
    mac_kernel(float2* y, const float2* __restrict__ ring, const float2* __restrict__ spectra,
               DeviceTables t, const std::uint64_t* count, std::uint32_t bins) {
  extern __shared__ float2 partial[];
  const std::uint32_t o = blockIdx.x;
  const std::uint32_t k = blockIdx.y * blockDim.x + threadIdx.x;
  float2 acc = make_float2(0.0f, 0.0f);
  if (k < bins)
    acc = accumulate_output(ring, spectra, t, *count, o, bins, k, threadIdx.y, blockDim.y);
  partial[threadIdx.y * blockDim.x + threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || k >= bins) return;
  for (unsigned s = 1; s < blockDim.y; ++s) {
    const float2 p = partial[s * blockDim.x + threadIdx.x];
    acc.x += p.x;
    acc.y += p.y;
  }
  y[std::size_t{o} * bins + k] = acc;
}

__global__ void finish_kernel(float* __restrict__ out, const float* __restrict__ result,
                              const float* __restrict__ window, float wet, float dry,
                              std::uint32_t outputs, std::uint32_t B, std::uint64_t* count) {
  const std::size_t idx = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (idx == 0) ++*count;  // no kernel of this period reads it after the multiply-accumulate
  if (idx >= std::size_t{outputs} * B) return;
  const std::size_t o = idx / B, n = idx % B;
  float v = wet * result[o * 2 * B + B + n];
  if (dry != 0.0f) v += dry * window[o * 2 * B + B + n];
  out[idx] = v;
}

__global__ void pad_partitions_kernel(float* frames, const float* __restrict__ taps,
                                      std::size_t n_taps, std::uint32_t first, std::uint32_t count,
                                      std::uint32_t B, float scale) {
  const std::size_t idx = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (idx >= std::size_t{count} * 2 * B) return;
  const std::size_t p = idx / (2 * B), n = idx % (2 * B);
  const std::size_t src = (first + p) * B + n;
  frames[idx] = (n < B && src < n_taps) ? taps[src] * scale : 0.0f;
}

}  // namespace

MacShape mac_shape(std::uint32_t bins, std::uint32_t max_partitions) {
  MacShape s;
  s.tile = std::min(bins, kMacBlock);
  s.slices = std::max(1u, std::min(max_partitions, kMacBlock / s.tile));
  s.tiles = (bins + s.tile - 1) / s.tile;
  return s;
}

void launch_stage_input(float* window, const float* in, std::uint32_t inputs, std::uint32_t B,
                        cudaStream_t stream) {
  stage_input_kernel<<<blocks_for(std::size_t{inputs} * B), kThreads, 0, stream>>>(window, in,
                                                                                   inputs, B);
  SIGPU_CUDA_CHECK_LAUNCH();
}

void launch_push_spectra(float2* ring, const float2* current, const DeviceTables& t,
                         const std::uint64_t* count, std::uint32_t inputs, std::uint32_t bins,
                         cudaStream_t stream) {
  push_spectra_kernel<<<blocks_for(std::size_t{inputs} * bins), kThreads, 0, stream>>>(
      ring, current, t, count, inputs, bins);
  SIGPU_CUDA_CHECK_LAUNCH();
}

void launch_mac(float2* y, const float2* ring, const float2* spectra, const DeviceTables& t,
                const std::uint64_t* count, std::uint32_t outputs, std::uint32_t bins,
                const MacShape& shape, cudaStream_t stream) {
  const dim3 grid(outputs, shape.tiles), block(shape.tile, shape.slices);
  const std::size_t shared = sizeof(float2) * shape.tile * shape.slices;
  mac_kernel<<<grid, block, shared, stream>>>(y, ring, spectra, t, count, bins);
  SIGPU_CUDA_CHECK_LAUNCH();
}

void launch_finish(float* out, const float* result, const float* window, float wet, float dry,
                   std::uint32_t outputs, std::uint32_t B, std::uint64_t* count,
                   cudaStream_t stream) {
  finish_kernel<<<blocks_for(std::size_t{outputs} * B), kThreads, 0, stream>>>(
      out, result, window, wet, dry, outputs, B, count);
  SIGPU_CUDA_CHECK_LAUNCH();
}

void launch_pad_partitions(float* frames, const float* taps, std::size_t n_taps,
                           std::uint32_t first, std::uint32_t count, std::uint32_t B, float scale,
                           cudaStream_t stream) {
  pad_partitions_kernel<<<blocks_for(std::size_t{count} * 2 * B), kThreads, 0, stream>>>(
      frames, taps, n_taps, first, count, B, scale);
  SIGPU_CUDA_CHECK_LAUNCH();
}

}  // namespace sigpu::convolution::cuda
