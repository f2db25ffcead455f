// WaveNet with every format 0.6/0.7 (A2) feature on the CPU: per-layer kernel sizes and
// activations, bottleneck, grouped convolutions, layer1x1 and head1x1, FiLM, gating and
// blending, head convolutions with a kernel, a condition_dsp. The plain reference: frame by
// frame, in NeuralAmpModelerCore's order of operations (wavenet/model.cpp, Layer::Process),
// including its one quirk: layer1x1_post_film is applied in blended layers only.
#include <algorithm>
#include <memory>
#include <vector>

#include "nam/activation.hpp"
#include "nam/cpu_engine.hpp"
#include "nam/layout.hpp"
#include "nam/ring.hpp"

namespace sigpu::nam {
namespace {

/// y = W x (+ bias) for a grouped 1x1; x and y do not overlap.
void conv1x1(const float* w, const ConvOffsets& c, const float* x, float* y) {
  const int og = c.out / c.groups, ig = c.in / c.groups;
  const float* wp = w + c.w;
  for (int g = 0; g < c.groups; ++g)
    for (int o = 0; o < og; ++o) {
      float acc = 0.0f;
      for (int i = 0; i < ig; ++i) acc += *wp++ * x[g * ig + i];
      y[g * og + o] = acc;
    }
  if (c.b >= 0)
    for (int o = 0; o < c.out; ++o) y[o] += w[c.b + o];
}

/// A convolution's weights from file order [g][o][i][k] to tap-major [k][o][i] (i within the
/// group), so that each tap reads one input frame and contiguous weights.
void to_tap_major(std::vector<float>& w, const ConvOffsets& c) {
  const int ig = c.in / c.groups, K = c.kernel;
  std::vector<float> t(static_cast<std::size_t>(K) * c.out * ig);
  const float* src = w.data() + c.w;
  for (int o = 0; o < c.out; ++o)
    for (int i = 0; i < ig; ++i)
      for (int k = 0; k < K; ++k) t[(static_cast<std::size_t>(k) * c.out + o) * ig + i] = *src++;
  std::copy(t.begin(), t.end(), w.begin() + c.w);
}

/// The dilated convolution at sample `pos`, reading its input history: the taps summed oldest
/// first, as NeuralAmpModelerCore does, then the bias.
void conv_taps(const float* w, const ConvOffsets& c, const Ring& hist, long long pos, float* y) {
  const int og = c.out / c.groups, ig = c.in / c.groups, K = c.kernel;
  for (int o = 0; o < c.out; ++o) y[o] = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float* x = hist.row(pos - static_cast<long long>(K - 1 - k) * c.dilation);
    const float* wk = w + c.w + static_cast<std::size_t>(k) * c.out * ig;
    for (int o = 0; o < c.out; ++o) {
      const float* xo = x + (o / og) * ig;
      const float* wo = wk + static_cast<std::size_t>(o) * ig;
      float acc = 0.0f;
      for (int i = 0; i < ig; ++i) acc += wo[i] * xo[i];
      y[o] += acc;
    }
  }
  if (c.b >= 0)
    for (int o = 0; o < c.out; ++o) y[o] += w[c.b + o];
}

struct LayerState {
  Ring conv_in;  // the (FiLMed) layer inputs the dilated conv reads
};
struct ArrayState {
  std::vector<LayerState> layers;
  Ring head_in;
};

class WaveNetA2Engine final : public CpuEngine {
 public:
  WaveNetA2Engine(const Model& m, int max_frames)
      : plan_(wavenet_plan(m.wavenet)), w_(m.weights), head_scale_(m.weights.back()) {
    if (m.wavenet.condition_dsp)
      condition_ = std::make_unique<WaveNetA2Engine>(*m.wavenet.condition_dsp, max_frames);
    int widest = 1;
    for (const WaveNetArrayPlan& a : plan_.arrays) {
      ArrayState s;
      for (const WaveNetLayerPlan& l : a.layers) {
        to_tap_major(w_, l.conv);
        s.layers.push_back(
            {Ring(l.conv.in, static_cast<long>(l.conv.kernel - 1) * l.conv.dilation, 1)});
        widest = std::max({widest, l.conv.in, l.conv.out, l.layer1x1.out, l.head1x1.out});
        for (const FilmOffsets& f : l.film) widest = std::max(widest, f.conv.out);
      }
      to_tap_major(w_, a.head);
      s.head_in = Ring(a.head.in, static_cast<long>(a.head.kernel - 1) * a.head.dilation, 1);
      widest = std::max({widest, a.head.in, a.head.out, a.rechannel.out});
      arrays_.push_back(std::move(s));
    }
    const std::size_t n = static_cast<std::size_t>(widest);
    for (auto* v : {&x_, &next_, &z_, &h_, &t_, &u_, &ss_, &y_}) v->assign(n, 0.0f);
    cond_.assign(static_cast<std::size_t>(plan_.arrays[0].layers[0].mixin.in), 0.0f);
    (void)max_frames;
  }

  int outputs() const { return plan_.arrays.back().head.out; }

  void process(const float* in, float* out, int frames) noexcept override {
    for (int t = 0; t < frames; ++t) {
      const float x = in[t];
      step(x, &y_out_);
      out[t] = y_out_;
    }
  }

  /// One sample: out[0..outputs()) (scaled by head_scale).
  void step(float input, float* out) noexcept {
    if (condition_)
      condition_->step(input, cond_.data());
    else
      cond_[0] = input;
    const float* w = w_.data();
    for (std::size_t ai = 0; ai < plan_.arrays.size(); ++ai) {
      const WaveNetArrayPlan& a = plan_.arrays[ai];
      ArrayState& s = arrays_[ai];
      // The array's input: the signal, or the previous array's last layer output (in next_).
      if (ai == 0) next_[0] = input;
      conv1x1(w, a.rechannel, next_.data(), x_.data());
      // The head accumulator starts from the previous array's head output (in y_).
      float* acc = s.head_in.row(pos_);
      for (int c = 0; c < a.head.in; ++c) acc[c] = ai == 0 ? 0.0f : y_[c];
      for (std::size_t li = 0; li < a.layers.size(); ++li) layer(a.layers[li], s.layers[li], acc);
      conv_taps(w, a.head, s.head_in, pos_, y_.data());
      std::copy(x_.begin(), x_.begin() + a.rechannel.out, next_.begin());
    }
    const WaveNetArrayPlan& last = plan_.arrays.back();
    for (int c = 0; c < last.head.out; ++c) out[c] = head_scale_ * y_[c];
    ++pos_;
  }

  void clear() override {
    if (condition_) condition_->clear();
    for (ArrayState& s : arrays_) {
      for (LayerState& l : s.layers) l.conv_in.clear();
      s.head_in.clear();
    }
    pos_ = 0;
  }

 private:
  /// in-place FiLM of v[0..dim) by the condition.
  void film(const FilmOffsets& f, float* v) noexcept {
    conv1x1(w_.data(), f.conv, cond_.data(), ss_.data());
    for (int c = 0; c < f.dim; ++c) v[c] = f.shift ? v[c] * ss_[c] + ss_[f.dim + c] : v[c] * ss_[c];
  }
  bool on(const WaveNetLayerPlan& l, FilmSlot s) const { return l.film[s].conv.w >= 0; }

  /// One layer at pos_: x_ in, x_ out (the residual), its head output added to acc.
  void layer(const WaveNetLayerPlan& l, LayerState& s, float* acc) noexcept {
    const float* w = w_.data();
    const int C = l.conv.in, B = l.bottleneck, Z = l.conv.out;
    float* in = s.conv_in.row(pos_);
    std::copy(x_.begin(), x_.begin() + C, in);
    if (on(l, conv_pre_film)) film(l.film[conv_pre_film], in);
    conv_taps(w, l.conv, s.conv_in, pos_, z_.data());
    if (on(l, conv_post_film)) film(l.film[conv_post_film], z_.data());
    const int cs = l.mixin.in;
    std::copy(cond_.begin(), cond_.begin() + cs, t_.begin());
    if (on(l, input_mixin_pre_film)) film(l.film[input_mixin_pre_film], t_.data());
    conv1x1(w, l.mixin, t_.data(), u_.data());
    if (on(l, input_mixin_post_film)) film(l.film[input_mixin_post_film], u_.data());
    for (int c = 0; c < Z; ++c) z_[c] += u_[c];
    if (on(l, activation_pre_film)) film(l.film[activation_pre_film], z_.data());

    switch (l.gating) {
      case Gating::none:
        for (int c = 0; c < B; ++c) h_[c] = activate(l.activation, z_[c], c);
        break;
      case Gating::gated:
        for (int c = 0; c < B; ++c)
          h_[c] = activate(l.activation, z_[c], c) * activate(l.secondary, z_[B + c], c);
        break;
      case Gating::blended:
        for (int c = 0; c < B; ++c) {
          const float alpha = activate(l.secondary, z_[B + c], c);
          h_[c] = alpha * activate(l.activation, z_[c], c) + (1.0f - alpha) * z_[c];
        }
        break;
    }
    if (on(l, activation_post_film)) film(l.film[activation_post_film], h_.data());

    if (l.head1x1.w >= 0) {
      conv1x1(w, l.head1x1, h_.data(), t_.data());
      if (on(l, head1x1_post_film)) film(l.film[head1x1_post_film], t_.data());
      for (int c = 0; c < l.head1x1.out; ++c) acc[c] += t_[c];
    } else {
      for (int c = 0; c < B; ++c) acc[c] += h_[c];
    }
    if (l.layer1x1.w >= 0) {
      conv1x1(w, l.layer1x1, h_.data(), t_.data());
      if (l.gating == Gating::blended && on(l, layer1x1_post_film))
        film(l.film[layer1x1_post_film], t_.data());
      for (int c = 0; c < C; ++c) x_[c] += t_[c];
    }
  }

  WaveNetPlan plan_;
  std::vector<float> w_;
  float head_scale_ = 1;
  std::unique_ptr<WaveNetA2Engine> condition_;
  std::vector<ArrayState> arrays_;
  std::vector<float> x_, next_, z_, h_, t_, u_, ss_, y_, cond_;
  float y_out_ = 0;
  long long pos_ = 0;
};

}  // namespace

std::unique_ptr<CpuEngine> make_wavenet_a2_engine(const Model& m, int max_frames) {
  return std::make_unique<WaveNetA2Engine>(m, max_frames);
}

}  // namespace sigpu::nam
