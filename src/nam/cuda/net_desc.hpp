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

}  // namespace sigpu::nam::cuda
