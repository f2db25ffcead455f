// The network descriptions the CUDA kernels take by value (kernel parameters live in the
// constant bank, so every lookup is a broadcast). Offsets index one instance's weights
// (Model::weights order) or its state. The kernels mark them __grid_constant__: indexing
// them with a runtime layer number then reads the constant bank instead of copying the
// struct to local memory.
#pragma once

namespace sigpu::nam::cuda {

inline constexpr int kMaxArrays = 4;
inline constexpr int kMaxLayers = 64;  // over all layer arrays
inline constexpr int kMaxLstmLayers = 8;

struct WnLayerDesc {
  int dilation;
  int conv_w, conv_b, mixin_w, out_w, out_b;  // weight offsets
  int ring;                                   // state offset of this layer's input history
  int ring_mask;                              // history length - 1 (a power of two)
};

struct WnArrayDesc {
  int in, channels, zc, head_size, kernel, gated, activation;
  int first_layer, num_layers;
  int rechannel_w, head_w, head_b;  // head_b < 0: no bias
};

struct WnNetDesc {
  int num_arrays;
  int head_scale;     // weight offset
  int widest;         // most channels (incl. 2x for gated conv outputs, head sizes) of any array
  int weight_floats;  // per instance, padded to a multiple of 4
  int state_floats;   // per instance
  WnArrayDesc arrays[kMaxArrays];
  WnLayerDesc layers[kMaxLayers];
};

struct LstmLayerDesc {
  int in;
  int w, b;  // weight offsets
};

struct LstmNetDesc {
  int num_layers, hidden;
  int head_w, head_b;
  int weight_floats;  // per instance, padded to a multiple of 4
  int state_floats;   // per instance: h then c, per layer
  LstmLayerDesc layers[kMaxLstmLayers];
};

// Any WaveNet (format 0.5 to 0.7; A1 is the special case), each instance its own network, so
// the descriptors live in global memory (wavenet_a2_kernel.cuh). Offsets in a net index its own
// weights (Model::weights, then the PReLU slopes) or its own state.
inline constexpr int kMaxSizes = 8;
inline constexpr int kFilmSlots = 8;

struct ConvDesc {
  int w, b;  // weight offsets; -1: absent (an inactive 1x1, no bias)
  int in, out, kernel, dilation, groups;
};
struct ActDesc {
  int kind;  // Activation
  float slope, lo, hi, lo_slope, hi_slope;
  int slopes, num_slopes;  // PReLU's per-channel slopes (weight offset), num_slopes 0: slope
};
struct FilmDesc {
  ConvDesc conv;  // conv.w < 0: inactive; conv.out = dim, or 2 dim with shift
  int dim, shift;
};
struct A2LayerDesc {
  ConvDesc conv, mixin, layer1x1, head1x1;  // layer1x1.w, head1x1.w < 0: inactive
  FilmDesc film[kFilmSlots];                // in FilmSlot order
  int bottleneck, gating;                   // Gating
  ActDesc act, secondary;
  int ring, ring_mask;  // state offset of the dilated conv's input history; its length - 1
};
struct A2ArrayDesc {
  ConvDesc rechannel, head;
  int first_layer, num_layers;
  int head_ring, head_ring_mask;  // the head convolution's input history
};
struct A2NetDesc {
  const float* weights;
  int weight_floats;  // padded to a multiple of 4
  int first_array, num_arrays;
  int head_scale;  // weight offset
  int condition;   // the net of its condition_dsp, run first; -1: the input is the condition
  // An LSTM (a SlimmableContainer's size, or beside WaveNets) when lstm_layers > 0: state per
  // layer h [hidden] then c [hidden]; weights as LstmLayout.
  int lstm_layers, lstm_hidden, lstm_head_w, lstm_head_b;
  int lstm_in[kMaxLstmLayers], lstm_w[kMaxLstmLayers], lstm_b[kMaxLstmLayers];
};
struct A2InstanceDesc {
  long long state;  // offset of the instance's state
  int num_sizes;    // Model::sizes (1 for a model of one size)
  int net[kMaxSizes];
  int net_state[kMaxSizes], condition_state[kMaxSizes];  // within the instance's state
};
// The crossfade between sizes (Processor's), per instance on the device.
struct SizeFade {
  int active, fading_from, faded;
};

}  // namespace sigpu::nam::cuda
