// The tables the CUDA kernel for any WaveNet (cuda/wavenet_a2_kernel.cuh) reads, built on the
// host for a batch of instances: one net per distinct model (sizes and condition_dsps
// included; WaveNets, and LSTMs as a container's size or beside them), each with its weights
// and its state layout, and per instance the nets it runs.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "nam/cuda/net_desc.hpp"

namespace sigpu::nam {

/// Throws UnsupportedError: "<source>: the cuda backend cannot run this model: <why>".
[[noreturn]] void refuse_on_cuda(const Model& m, const std::string& why);

struct WaveNetProgram {
  std::vector<cuda::A2NetDesc> nets;  ///< weights: null until bind_weights()
  std::vector<cuda::A2ArrayDesc> arrays;
  std::vector<cuda::A2LayerDesc> layers;
  std::vector<cuda::A2InstanceDesc> instances;
  std::vector<float> weights;        ///< every net's (then its PReLU slopes), each padded to 4
  std::vector<long> weight_offset;   ///< per net, into weights
  long state_floats = 0;             ///< all instances'
  std::vector<float> initial_state;  ///< state_floats: zeros, the LSTMs' initial h and c
  int widest = 1, max_sizes = 1;
  int largest_net = 0;  ///< the most weight floats of one net
  long prewarm = 0;     ///< samples of silence that pre-warm every instance

  /// Points each net at its weights in a copy of `weights` starting at base.
  void bind_weights(const float* base);
};

/// Throws UnsupportedError naming the model and the feature for what the kernel cannot run
/// (ConvNet, Linear, more than cuda::kMaxSizes sizes, ...).
WaveNetProgram wavenet_program(std::span<const Model* const> models, int max_frames);

}  // namespace sigpu::nam
