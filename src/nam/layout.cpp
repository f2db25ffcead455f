#include "nam/layout.hpp"

namespace sigpu::nam {

namespace {

// Hands out consecutive ranges of the weight vector, in file order.
struct Cursor {
  long at = 0;
  long take(long n) {
    const long start = at;
    at += n;
    return start;
  }
};

}  // namespace

WaveNetLayout wavenet_layout(const WaveNet& w) {
  WaveNetLayout out;
  Cursor cur;
  for (const LayerArray& a : w.layer_arrays) {
    const long c = a.channels, zc = a.gated ? 2L * c : c;
    WaveNetArrayOffsets ao;
    ao.rechannel_w = cur.take(c * a.input_size);
    for (int d : a.dilations) {
      WaveNetLayerOffsets lo;
      lo.dilation = d;
      lo.conv_w = cur.take(zc * c * a.kernel_size);
      lo.conv_b = cur.take(zc);
      lo.mixin_w = cur.take(zc * a.condition_size);
      lo.out_w = cur.take(c * c);
      lo.out_b = cur.take(c);
      ao.layers.push_back(lo);
    }
    ao.head_w = cur.take(static_cast<long>(a.head_size) * c);
    if (a.head_bias) ao.head_b = cur.take(a.head_size);
    out.arrays.push_back(std::move(ao));
  }
  out.head_scale = cur.take(1);
  out.count = cur.at;
  return out;
}

LstmLayout lstm_layout(const Lstm& l) {
  LstmLayout out;
  Cursor cur;
  const long h = l.hidden_size;
  for (int i = 0; i < l.num_layers; ++i) {
    const int in = i == 0 ? l.input_size : l.hidden_size;
    out.layers.push_back({.w = cur.take(4 * h * (in + h)),
                          .b = cur.take(4 * h),
                          .h0 = cur.take(h),
                          .c0 = cur.take(h),
                          .input_size = in});
  }
  out.head_w = cur.take(h);
  out.head_b = cur.take(1);
  out.count = cur.at;
  return out;
}

ConvNetLayout convnet_layout(const ConvNet& c) {
  ConvNetLayout out;
  Cursor cur;
  const long ch = c.channels;
  for (std::size_t i = 0; i < c.dilations.size(); ++i) {
    ConvNetBlockOffsets b;
    b.in_channels = i == 0 ? 1 : c.channels;
    b.dilation = c.dilations[i];
    b.conv_w = cur.take(ch * b.in_channels * 2);
    if (c.batchnorm)
      b.bn = cur.take(4 * ch + 1);
    else
      b.conv_b = cur.take(ch);
    out.blocks.push_back(b);
  }
  out.head_w = cur.take(ch);
  out.head_b = cur.take(1);
  out.count = cur.at;
  return out;
}

long linear_weight_count(const Linear& l) {
  return l.receptive_field + (l.bias ? 1 : 0);
}

long expected_weight_count(const Model& m) {
  switch (m.architecture) {
    case Architecture::wavenet:
      return wavenet_layout(m.wavenet).count;
    case Architecture::lstm:
      return lstm_layout(m.lstm).count;
    case Architecture::convnet:
      return convnet_layout(m.convnet).count;
    case Architecture::linear:
      return linear_weight_count(m.linear);
  }
  return 0;
}

}  // namespace sigpu::nam
