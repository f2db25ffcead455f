// The runner's own kernels: the period's input into the arena and arena channels out to planar
// blocks. The effects' kernels live with the effects (effects/*/), launched through
// graph_builder.cuh.
#pragma once

#include <cstdint>

namespace sigpu::audio::cuda {

inline constexpr int kBlock = 64;

__device__ __forceinline__ std::uint32_t job_index() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}

struct GatherArgs {
  const float* in;
  float* arena;
  std::uint32_t count;
};
/// The period's input (planar, device-accessible: pinned host or device memory) into the arena.
__global__ void gather_kernel(GatherArgs a) {
  for (auto i = job_index(); i < a.count; i += gridDim.x * blockDim.x) a.arena[i] = a.in[i];
}

struct ChannelCopyArgs {
  const std::uint32_t* offsets;  ///< arena offset of each channel
  const float* arena;
  float* out;  ///< planar: channel c at out + c * n
  std::uint32_t channels;
  int n;
};
/// Arena channels into one planar block: the graph's outputs, a convolution node's inputs.
__global__ void copy_channels_kernel(ChannelCopyArgs a) {
  const std::uint32_t count = a.channels * static_cast<std::uint32_t>(a.n);
  for (auto i = job_index(); i < count; i += gridDim.x * blockDim.x) {
    a.out[i] = a.arena[a.offsets[i / a.n] + i % a.n];
  }
}

}  // namespace sigpu::audio::cuda
