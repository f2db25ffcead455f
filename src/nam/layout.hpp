// Where each tensor of a model sits in its flat weight vector, in the order NeuralAmpModelerCore
// reads them. The loader checks the count with it; the CPU and CUDA backends index with it.
#pragma once

#include <string>
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

// WaveNet with every format 0.6/0.7 feature (the CPU reference engine's view). A convolution's
// weights are [groups][out / groups][in / groups][kernel], then its bias [out]; a layer's
// tensors come in the order dilated conv, condition mix-in, layer1x1, head1x1, then the active
// FiLM slots in FilmSlot order, each FiLM a grouped 1x1 from the condition to its scale (and
// shift) rows with a bias. Arrays end with the head convolution; the net ends with head_scale.
struct ConvOffsets {
  long w = -1, b = -1;  ///< -1: absent (an inactive 1x1, a conv without bias)
  int in = 0, out = 0, kernel = 1, dilation = 1, groups = 1;
};
struct FilmOffsets {
  ConvOffsets conv;  ///< conv.out = dim, or 2 dim with shift (scale rows, then shift rows)
  int dim = 0;
  bool shift = false;
};
struct WaveNetLayerPlan {
  ConvOffsets conv, mixin, layer1x1, head1x1;  ///< layer1x1.w, head1x1.w -1 when inactive
  FilmOffsets film[film_slots];                ///< film[s].conv.w -1 when inactive
  int bottleneck = 1;
  Gating gating = Gating::none;
  ActivationSpec activation, secondary;
};
struct WaveNetArrayPlan {
  ConvOffsets rechannel, head;
  std::vector<WaveNetLayerPlan> layers;
  int head_in = 1;  ///< the head's input: head1x1 out_channels, else the bottleneck
};
struct WaveNetPlan {
  std::vector<WaveNetArrayPlan> arrays;
  long head_scale = 0;
  long count = 0;
};
WaveNetPlan wavenet_plan(const WaveNet& w);

/// The first feature of `w` beyond the A1 WaveNet (format 0.5: one kernel size and activation,
/// no bottleneck, groups, FiLM, ...), named as in the file; empty for an A1-shaped WaveNet.
std::string a2_feature(const WaveNet& w);

/// A layer array's channels for a size in 0..1 (slice_channels_uniform).
int slim_channels_for_size(const LayerArray& a, double size);

/// Linear: receptive_field taps, newest sample first, then the bias when present.
long linear_weight_count(const Linear& l);

/// The weight count the model's config implies.
long expected_weight_count(const Model& m);

}  // namespace sigpu::nam
