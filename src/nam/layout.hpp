// Where each tensor of a model sits in its flat weight vector, in the order NeuralAmpModelerCore
// reads them. The loader checks the count with it; the CPU and CUDA backends index with it.
#pragma once

#include <vector>

#include <sigpu/nam.hpp>

namespace sigpu::nam {

// Offsets are indices into Model::weights; -1 marks a tensor the config leaves out.
//
// WaveNet, per layer array: rechannel [channels][input_size] (no bias); per layer: dilated conv
// [out][channels][kernel] then its bias [out] (out = 2 channels when gated), condition mix-in
// [out][condition_size] (no bias), 1x1 [channels][channels] then its bias [channels]; head 1x1
// [head_size][channels] (+ bias [head_size] when head_bias). After all arrays: head_scale.
struct WaveNetLayerOffsets {
  long conv_w = 0, conv_b = 0, mixin_w = 0, out_w = 0, out_b = 0;
  int dilation = 1;
};
struct WaveNetArrayOffsets {
  long rechannel_w = 0;
  std::vector<WaveNetLayerOffsets> layers;
  long head_w = 0, head_b = -1;
};
struct WaveNetLayout {
  std::vector<WaveNetArrayOffsets> arrays;
  long head_scale = 0;
  long count = 0;
};
WaveNetLayout wavenet_layout(const WaveNet& w);

// LSTM, per layer: W [4 hidden][in + hidden] (gate rows i, f, g, o; columns x then h), bias
// [4 hidden], initial h [hidden], initial c [hidden]. Then the head: [hidden] weights + bias.
struct LstmLayerOffsets {
  long w = 0, b = 0, h0 = 0, c0 = 0;
  int input_size = 1;
};
struct LstmLayout {
  std::vector<LstmLayerOffsets> layers;
  long head_w = 0, head_b = 0;
  long count = 0;
};
LstmLayout lstm_layout(const Lstm& l);

// ConvNet, per block: conv [channels][in][2] (+ bias [channels] without batch norm); with
// batch norm: running mean, running var, weight, bias (each [channels]) and eps. Then the
// head: [channels] weights + bias. Block 0 reads 1 input channel.
struct ConvNetBlockOffsets {
  long conv_w = 0, conv_b = -1, bn = -1;
  int in_channels = 1, dilation = 1;
};
struct ConvNetLayout {
  std::vector<ConvNetBlockOffsets> blocks;
  long head_w = 0, head_b = 0;
  long count = 0;
};
ConvNetLayout convnet_layout(const ConvNet& c);

/// Linear: receptive_field taps, newest sample first, then the bias when present.
long linear_weight_count(const Linear& l);

/// The weight count the model's config implies.
long expected_weight_count(const Model& m);

}  // namespace sigpu::nam
