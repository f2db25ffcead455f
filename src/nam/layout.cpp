#include "nam/layout.hpp"

#include <algorithm>
#include <cmath>

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

WaveNetPlan wavenet_plan(const WaveNet& w) {
  WaveNetPlan out;
  Cursor cur;
  const auto conv = [&cur](int in, int o, int kernel, int dilation, int groups, bool bias) {
    ConvOffsets c{.in = in, .out = o, .kernel = kernel, .dilation = dilation, .groups = groups};
    c.w = cur.take(static_cast<long>(o / groups) * (in / groups) * groups * kernel);
    if (bias) c.b = cur.take(o);
    return c;
  };
  for (const LayerArray& a : w.layer_arrays) {
    WaveNetArrayPlan ap;
    ap.rechannel = conv(a.input_size, a.channels, 1, 1, 1, false);
    const int cs = a.condition_size, b = a.bottleneck;
    for (std::size_t i = 0; i < a.dilations.size(); ++i) {
      WaveNetLayerPlan l;
      l.bottleneck = b;
      l.gating = a.gating[i];
      l.activation = a.activations[i];
      l.secondary = a.secondary[i];
      const int z = l.gating == Gating::none ? b : 2 * b;
      l.conv = conv(a.channels, z, a.kernel_sizes[i], a.dilations[i], a.groups_input, true);
      l.mixin = conv(cs, z, 1, 1, a.groups_input_mixin, false);
      l.layer1x1 = a.layer1x1 ? conv(b, a.channels, 1, 1, a.layer1x1_groups, true)
                              : ConvOffsets{.in = b, .out = a.channels};
      l.head1x1 = a.head1x1 ? conv(b, a.head1x1_out_channels, 1, 1, a.head1x1_groups, true)
                            : ConvOffsets{.in = b, .out = b};
      const int dims[film_slots] = {a.channels, z, cs, z, z, b, a.channels, a.head1x1_out_channels};
      for (int s = 0; s < film_slots; ++s) {
        const Film& f = a.film[s];
        FilmOffsets& fo = l.film[s];
        fo.dim = dims[s];
        fo.shift = f.shift;
        if (f.active) fo.conv = conv(cs, (f.shift ? 2 : 1) * dims[s], 1, 1, f.groups, true);
      }
      ap.layers.push_back(l);
    }
    ap.head_in = a.head1x1 ? a.head1x1_out_channels : b;
    ap.head = conv(ap.head_in, a.head_size, a.head_kernel_size, a.head_dilation, 1, a.head_bias);
    out.arrays.push_back(std::move(ap));
  }
  out.head_scale = cur.take(1);
  out.count = cur.at;
  return out;
}

std::string a2_feature(const WaveNet& w) {
  if (w.condition_dsp) return "condition_dsp";
  for (const LayerArray& a : w.layer_arrays) {
    for (std::size_t i = 0; i < a.dilations.size(); ++i) {
      if (a.kernel_sizes[i] != a.kernel_size) return "kernel_sizes (one per layer)";
      const ActivationSpec& s = a.activations[i];
      if (s.kind != a.activation || s != ActivationSpec{.kind = s.kind})
        return "activation objects";
      if (a.gating[i] == Gating::blended) return "gating_mode blended";
      if (a.gating[i] != (a.gated ? Gating::gated : Gating::none)) return "gating_mode per layer";
      if (a.gated && a.secondary[i] != ActivationSpec{.kind = Activation::sigmoid})
        return "secondary_activation";
    }
    switch (a.activation) {
      case Activation::fast_tanh:
      case Activation::prelu:
      case Activation::leaky_hardtanh:
      case Activation::softsign:
        return "activation " + std::string(to_string(a.activation));
      default:
        break;
    }
    if (a.condition_size != 1) return "condition_size";
    if (a.bottleneck != a.channels) return "bottleneck";
    if (a.groups_input != 1) return "groups_input";
    if (a.groups_input_mixin != 1) return "groups_input_mixin";
    if (!a.layer1x1) return "layer1x1 inactive";
    if (a.layer1x1_groups != 1) return "layer1x1.groups";
    if (a.head1x1) return "head1x1";
    for (const Film& f : a.film)
      if (f.active) return "FiLM";
    if (a.head_kernel_size != 1) return "head.kernel_size";
    if (!a.slim_channels.empty()) return "slimmable";
  }
  return "";
}

int slim_channels_for_size(const LayerArray& a, double size) {
  const int n = static_cast<int>(a.slim_channels.size());
  if (n == 0) return a.channels;
  const int i = std::min(static_cast<int>(std::floor(size * static_cast<double>(n))), n - 1);
  return a.slim_channels[static_cast<std::size_t>(std::max(i, 0))];
}

long linear_weight_count(const Linear& l) {
  return l.receptive_field + (l.bias ? 1 : 0);
}

long expected_weight_count(const Model& m) {
  switch (m.architecture) {
    case Architecture::wavenet:
      return wavenet_plan(m.wavenet).count;
    case Architecture::lstm:
      return lstm_layout(m.lstm).count;
    case Architecture::convnet:
      return convnet_layout(m.convnet).count;
    case Architecture::linear:
      return linear_weight_count(m.linear);
    case Architecture::slimmable_container:
      return 0;
  }
  return 0;
}

}  // namespace sigpu::nam
