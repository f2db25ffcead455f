#include "nam/gpu_wavenet_program.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <tuple>
#include <utility>

#include "nam/layout.hpp"
#include "nam/ring.hpp"

namespace sigpu::nam {

void refuse_on_cuda(const Model& m, const std::string& why) {
  throw UnsupportedError(m.source + ": the cuda backend cannot run this model: " + why);
}

namespace {

cuda::ConvDesc conv_desc(const ConvOffsets& c) {
  return {
      static_cast<int>(c.w), static_cast<int>(c.b), c.in, c.out, c.kernel, c.dilation, c.groups};
}

class Builder {
 public:
  Builder(WaveNetProgram& p, int max_frames) : p_(p), max_frames_(max_frames) {}

  /// The net of a WaveNet or LSTM of one size (one per Model object).
  int net(const Model& m) {
    if (auto it = index_.find(&m); it != index_.end()) return it->second;
    if (m.architecture == Architecture::lstm) return lstm(m);
    if (m.architecture != Architecture::wavenet)
      refuse_on_cuda(m, std::string(to_string(m.architecture)) +
                            " (the cuda backend runs WaveNets and LSTMs)");
    cuda::A2NetDesc n{};
    n.condition = -1;
    if (m.wavenet.condition_dsp) {  // first: its arrays and layers come before this net's
      if (m.wavenet.condition_dsp->wavenet.condition_dsp)
        refuse_on_cuda(m, "a condition_dsp with its own condition_dsp");
      n.condition = net(*m.wavenet.condition_dsp);
    }
    const WaveNetPlan plan = wavenet_plan(m.wavenet);
    std::vector<float> w = m.weights;
    n.first_array = static_cast<int>(p_.arrays.size());
    n.num_arrays = static_cast<int>(plan.arrays.size());
    n.head_scale = static_cast<int>(plan.head_scale);
    long state = 0;
    const auto ring = [&](int width, long history) {
      const long len = ring_size(history + max_frames_);
      const long at = state;
      state += len * width;
      return std::pair<int, int>(static_cast<int>(at), static_cast<int>(len - 1));
    };
    const auto act = [&](const ActivationSpec& a) {
      cuda::ActDesc d{static_cast<int>(a.kind),
                      a.negative_slope,
                      a.min_val,
                      a.max_val,
                      a.min_slope,
                      a.max_slope,
                      0,
                      0};
      if (a.kind == Activation::prelu && !a.negative_slopes.empty()) {
        d.slopes = static_cast<int>(w.size());
        d.num_slopes = static_cast<int>(a.negative_slopes.size());
        w.insert(w.end(), a.negative_slopes.begin(), a.negative_slopes.end());
      }
      return d;
    };
    for (const WaveNetArrayPlan& a : plan.arrays) {
      cuda::A2ArrayDesc ad{};
      ad.rechannel = conv_desc(a.rechannel);
      ad.head = conv_desc(a.head);
      ad.first_layer = static_cast<int>(p_.layers.size());
      ad.num_layers = static_cast<int>(a.layers.size());
      widen({a.rechannel.in, a.rechannel.out, a.head.in, a.head.out});
      for (const WaveNetLayerPlan& l : a.layers) {
        cuda::A2LayerDesc ld{};
        ld.conv = conv_desc(l.conv);
        ld.mixin = conv_desc(l.mixin);
        ld.layer1x1 = conv_desc(l.layer1x1);
        ld.head1x1 = conv_desc(l.head1x1);
        for (int s = 0; s < film_slots; ++s)
          ld.film[s] = {conv_desc(l.film[s].conv), l.film[s].dim, l.film[s].shift ? 1 : 0};
        ld.bottleneck = l.bottleneck;
        ld.gating = static_cast<int>(l.gating);
        ld.act = act(l.activation);
        ld.secondary = act(l.secondary);
        std::tie(ld.ring, ld.ring_mask) =
            ring(l.conv.in, static_cast<long>(l.conv.kernel - 1) * l.conv.dilation);
        widen({l.conv.in, l.conv.out, l.mixin.in, l.layer1x1.out, l.head1x1.out});
        p_.layers.push_back(ld);
      }
      std::tie(ad.head_ring, ad.head_ring_mask) =
          ring(a.head.in, static_cast<long>(a.head.kernel - 1) * a.head.dilation);
      p_.arrays.push_back(ad);
    }
    return add(m, n, std::move(w), state, {});
  }

  int lstm(const Model& m) {
    const LstmLayout layout = lstm_layout(m.lstm);
    if (m.lstm.num_layers > cuda::kMaxLstmLayers)
      refuse_on_cuda(m, "more than " + std::to_string(cuda::kMaxLstmLayers) + " LSTM layers");
    const int H = m.lstm.hidden_size;
    cuda::A2NetDesc n{};
    n.condition = -1;
    n.lstm_layers = m.lstm.num_layers;
    n.lstm_hidden = H;
    n.lstm_head_w = static_cast<int>(layout.head_w);
    n.lstm_head_b = static_cast<int>(layout.head_b);
    std::vector<float> initial;  // h0, c0 per layer
    for (int l = 0; l < n.lstm_layers; ++l) {
      const LstmLayerOffsets& lo = layout.layers[static_cast<std::size_t>(l)];
      n.lstm_in[l] = lo.input_size;
      n.lstm_w[l] = static_cast<int>(lo.w);
      n.lstm_b[l] = static_cast<int>(lo.b);
      initial.insert(initial.end(), m.weights.begin() + lo.h0, m.weights.begin() + lo.h0 + H);
      initial.insert(initial.end(), m.weights.begin() + lo.c0, m.weights.begin() + lo.c0 + H);
    }
    widen({H});
    const long state = static_cast<long>(initial.size());
    return add(m, n, m.weights, state, std::move(initial));
  }

  void instance(const Model& m) {
    std::vector<const Model*> sizes;
    if (m.sizes.empty()) sizes.push_back(&m);
    for (const SizedModel& s : m.sizes) sizes.push_back(s.model.get());
    if (static_cast<int>(sizes.size()) > cuda::kMaxSizes)
      refuse_on_cuda(m, "more than " + std::to_string(cuda::kMaxSizes) + " sizes");
    cuda::A2InstanceDesc d{};
    d.state = p_.state_floats;
    d.num_sizes = static_cast<int>(sizes.size());
    long state = 0;
    for (int s = 0; s < d.num_sizes; ++s) {
      d.net[s] = net(*sizes[s]);
      const int c = p_.nets[d.net[s]].condition;
      if (c >= 0) {
        d.condition_state[s] = static_cast<int>(state);
        state += state_[c];
      }
      d.net_state[s] = static_cast<int>(state);
      state += state_[d.net[s]];
      if (state > (1L << 30)) refuse_on_cuda(m, "its history does not fit 32-bit offsets");
    }
    p_.instances.push_back(d);
    p_.state_floats += state;
    p_.initial_state.resize(static_cast<std::size_t>(p_.state_floats), 0.0f);
    for (int s = 0; s < d.num_sizes; ++s) {
      initialise(d.net[s], d.state + d.net_state[s]);
      if (const int c = p_.nets[d.net[s]].condition; c >= 0)
        initialise(c, d.state + d.condition_state[s]);
    }
    p_.max_sizes = std::max(p_.max_sizes, d.num_sizes);
    p_.prewarm = std::max(p_.prewarm, m.prewarm_samples());
  }

 private:
  void widen(std::initializer_list<int> v) { p_.widest = std::max(p_.widest, std::max(v)); }

  /// Records net n of m with its weights, state floats and initial state (empty: zeros).
  int add(const Model& m, cuda::A2NetDesc n, std::vector<float> w, long state,
          std::vector<float> initial) {
    if (state > (1L << 30)) refuse_on_cuda(m, "its history does not fit 32-bit offsets");
    if (w.size() > (1UL << 28)) refuse_on_cuda(m, "its weights do not fit 32-bit offsets");
    w.resize((w.size() + 3) / 4 * 4, 0.0f);
    n.weight_floats = static_cast<int>(w.size());
    p_.largest_net = std::max(p_.largest_net, n.weight_floats);
    p_.weight_offset.push_back(static_cast<long>(p_.weights.size()));
    p_.weights.insert(p_.weights.end(), w.begin(), w.end());
    p_.nets.push_back(n);
    state_.push_back(state);
    initial_.push_back(std::move(initial));
    const int i = static_cast<int>(p_.nets.size()) - 1;
    index_.emplace(&m, i);
    return i;
  }

  /// The net's initial state at `at` of the program's initial state.
  void initialise(int net, long at) {
    const std::vector<float>& v = initial_[static_cast<std::size_t>(net)];
    std::copy(v.begin(), v.end(), p_.initial_state.begin() + at);
  }

  WaveNetProgram& p_;
  int max_frames_;
  std::map<const Model*, int> index_;
  std::vector<long> state_;                  // per net
  std::vector<std::vector<float>> initial_;  // per net
};

}  // namespace

void WaveNetProgram::bind_weights(const float* base) {
  for (std::size_t i = 0; i < nets.size(); ++i) nets[i].weights = base + weight_offset[i];
}

WaveNetProgram wavenet_program(std::span<const Model* const> models, int max_frames) {
  WaveNetProgram p;
  Builder b(p, max_frames);
  for (const Model* m : models) b.instance(*m);
  return p;
}

}  // namespace sigpu::nam
