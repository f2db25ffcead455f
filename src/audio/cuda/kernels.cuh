// The audio kernels: one thread per job (one channel of one node), running the per-sample code
// the CPU backend runs (dsp/*.hpp). Each launch covers one group: every node of one kind at
// one level of the graph, however many channels and nodes that is.
#pragma once

#include <cstdint>

#include "audio/dsp/biquad.hpp"
#include "audio/dsp/compressor.hpp"
#include "audio/dsp/delay.hpp"
#include "audio/dsp/gate.hpp"
#include "audio/dsp/mix.hpp"

namespace sigpu::audio::cuda {

inline constexpr int kBlock = 64;

// One group's launch: the job arrays of its kind (offset to the group's first job), the
// parameters and state, and the call that runs job j.
struct MixArgs {
  const dsp::MixJob* jobs;
  const dsp::MixTerm* terms;
  const dsp::GainRamp* gains;
  float* arena;
  int n;
  std::uint32_t count;
  __device__ void operator()(std::uint32_t j) const {
    dsp::mix_job(jobs[j], terms, gains, arena, n);
  }
};
struct EqArgs {
  const dsp::EqJob* jobs;
  const dsp::EqBand* bands;
  double* state;
  float* arena;
  int n;
  std::uint32_t count;
  __device__ void operator()(std::uint32_t j) const {
    dsp::eq_job(jobs[j], bands, state, arena, n);
  }
};
struct GateArgs {
  const dsp::GateJob* jobs;
  const dsp::GateParams* params;
  dsp::GateState* state;
  float* arena;
  int n;
  std::uint32_t count;
  __device__ void operator()(std::uint32_t j) const {
    dsp::gate_job(jobs[j], params, state, arena, n);
  }
};
struct CompressorArgs {
  const dsp::CompressorJob* jobs;
  const dsp::CompressorParams* params;
  dsp::CompressorState* state;
  float* arena;
  int n;
  std::uint32_t count;
  __device__ void operator()(std::uint32_t j) const {
    dsp::compressor_job(jobs[j], params, state, arena, n);
  }
};
struct DelayArgs {
  const dsp::DelayJob* jobs;
  const dsp::DelayParams* params;
  dsp::DelayState* state;
  float* rings;
  float* arena;
  int n;
  std::uint32_t count;
  __device__ void operator()(std::uint32_t j) const {
    dsp::delay_job(jobs[j], params, state, rings, arena, n);
  }
};

__device__ __forceinline__ std::uint32_t job_index() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}

/// One thread per job of a group.
template <typename Args>
__global__ void jobs_kernel(Args a) {
  const auto j = job_index();
  if (j < a.count) a(j);
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

struct ScaledCopyArgs {
  const std::uint32_t* offsets;  ///< arena offset of each channel
  float* arena;
  float* planar;  ///< channel c at planar + c * n
  float gain;
  std::uint32_t channels;
  int n;
};
/// A nam node's input channels, times its input gain, into the planar block its batch reads.
__global__ void scaled_gather_kernel(ScaledCopyArgs a) {
  const std::uint32_t count = a.channels * static_cast<std::uint32_t>(a.n);
  for (auto i = job_index(); i < count; i += gridDim.x * blockDim.x) {
    a.planar[i] = a.arena[a.offsets[i / a.n] + i % a.n] * a.gain;
  }
}
/// The batch's planar output, times the output gain, into the node's arena channels.
__global__ void scaled_scatter_kernel(ScaledCopyArgs a) {
  const std::uint32_t count = a.channels * static_cast<std::uint32_t>(a.n);
  for (auto i = job_index(); i < count; i += gridDim.x * blockDim.x) {
    a.arena[a.offsets[i / a.n] + i % a.n] = a.planar[i] * a.gain;
  }
}

}  // namespace sigpu::audio::cuda
