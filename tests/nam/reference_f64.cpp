#include "nam/reference_f64.hpp"

#include <cmath>
#include <stdexcept>

namespace sigpu::test {
namespace {

using Signal = std::vector<std::vector<double>>;  // [channel][time]

class Cursor {
 public:
  explicit Cursor(const std::vector<float>& w) : w_(w) {}
  double next() {
    if (at_ >= w_.size()) throw std::runtime_error("reference: ran out of weights");
    return w_[at_++];
  }
  bool done() const { return at_ == w_.size(); }

 private:
  const std::vector<float>& w_;
  std::size_t at_ = 0;
};

double act(nam::Activation a, double x) {
  switch (a) {
    case nam::Activation::tanh:
      return std::tanh(x);
    case nam::Activation::hardtanh:
      return x < -1 ? -1 : (x > 1 ? 1 : x);
    case nam::Activation::relu:
      return x > 0 ? x : 0;
    case nam::Activation::leaky_relu:
      return x > 0 ? x : 0.01 * x;
    case nam::Activation::sigmoid:
      return 1 / (1 + std::exp(-x));
    case nam::Activation::silu:
      return x / (1 + std::exp(-x));
    case nam::Activation::hardswish:
      return x <= -3 ? 0 : (x >= 3 ? x : x * (x + 3) / 6);
    case nam::Activation::fast_tanh:
    case nam::Activation::prelu:
    case nam::Activation::leaky_hardtanh:
    case nam::Activation::softsign:
      throw std::runtime_error("reference: A1 activations only");
  }
  return x;
}

// Conv1d(in, out, kernel, dilation) with PyTorch's weight layout [out][in][k], causal: the
// last tap is the current sample, samples before the start are zero.
Signal conv(Cursor& w, const Signal& x, int out, int kernel, int dilation, bool bias) {
  const int in = static_cast<int>(x.size());
  const long n = static_cast<long>(x[0].size());
  std::vector<double> weight(static_cast<std::size_t>(out) * in * kernel);
  for (double& v : weight) v = w.next();
  Signal y(out, std::vector<double>(n, 0.0));
  for (int o = 0; o < out; ++o) {
    for (int i = 0; i < in; ++i)
      for (int k = 0; k < kernel; ++k) {
        const double c = weight[(static_cast<std::size_t>(o) * in + i) * kernel + k];
        const long shift = static_cast<long>(dilation) * (kernel - 1 - k);
        for (long t = shift; t < n; ++t) y[o][t] += c * x[i][t - shift];
      }
  }
  if (bias)
    for (int o = 0; o < out; ++o) {
      const double b = w.next();
      for (double& v : y[o]) v += b;
    }
  return y;
}

std::vector<double> wavenet(const nam::Model& m, const std::vector<double>& x) {
  Cursor w(m.weights);
  const Signal cond{x};
  Signal layer_in{x};
  Signal head_prev;
  for (const nam::LayerArray& a : m.wavenet.layer_arrays) {
    Signal cur = conv(w, layer_in, a.channels, 1, 1, false);
    Signal head =
        head_prev.empty() ? Signal(a.channels, std::vector<double>(x.size(), 0.0)) : head_prev;
    for (int d : a.dilations) {
      const int zc = a.gated ? 2 * a.channels : a.channels;
      Signal z = conv(w, cur, zc, a.kernel_size, d, true);
      const Signal mix = conv(w, cond, zc, 1, 1, false);
      for (int o = 0; o < zc; ++o)
        for (std::size_t t = 0; t < x.size(); ++t) z[o][t] += mix[o][t];
      Signal post(a.channels, std::vector<double>(x.size()));
      for (int o = 0; o < a.channels; ++o)
        for (std::size_t t = 0; t < x.size(); ++t) {
          post[o][t] = act(a.activation, z[o][t]);
          if (a.gated) post[o][t] *= act(nam::Activation::sigmoid, z[o + a.channels][t]);
          head[o][t] += post[o][t];
        }
      const Signal res = conv(w, post, a.channels, 1, 1, true);
      for (int o = 0; o < a.channels; ++o)
        for (std::size_t t = 0; t < x.size(); ++t) cur[o][t] += res[o][t];
    }
    head_prev = conv(w, head, a.head_size, 1, 1, a.head_bias);
    layer_in = cur;
  }
  const double scale = w.next();
  if (!w.done()) throw std::runtime_error("reference: weights left over");
  std::vector<double> y(x.size());
  for (std::size_t t = 0; t < x.size(); ++t) y[t] = scale * head_prev[0][t];
  return y;
}

std::vector<double> lstm(const nam::Model& m, const std::vector<double>& x) {
  Cursor w(m.weights);
  const int H = m.lstm.hidden_size;
  struct Cell {
    int in;
    std::vector<double> W, b, h, c;
  };
  std::vector<Cell> cells;
  for (int l = 0; l < m.lstm.num_layers; ++l) {
    Cell c{l == 0 ? m.lstm.input_size : H, {}, {}, {}, {}};
    c.W.resize(static_cast<std::size_t>(4 * H) * (c.in + H));
    for (double& v : c.W) v = w.next();
    c.b.resize(4 * H);
    for (double& v : c.b) v = w.next();
    c.h.resize(H);
    for (double& v : c.h) v = w.next();
    c.c.resize(H);
    for (double& v : c.c) v = w.next();
    cells.push_back(c);
  }
  std::vector<double> head(H);
  for (double& v : head) v = w.next();
  const double head_bias = w.next();
  if (!w.done()) throw std::runtime_error("reference: weights left over");

  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  std::vector<double> y(x.size());
  for (std::size_t t = 0; t < x.size(); ++t) {
    std::vector<double> input{x[t]};
    for (Cell& c : cells) {
      std::vector<double> xh = input;
      xh.insert(xh.end(), c.h.begin(), c.h.end());
      std::vector<double> g(4 * H);
      for (int r = 0; r < 4 * H; ++r) {
        g[r] = c.b[r];
        for (std::size_t j = 0; j < xh.size(); ++j) g[r] += c.W[r * xh.size() + j] * xh[j];
      }
      for (int u = 0; u < H; ++u) {
        c.c[u] = sig(g[H + u]) * c.c[u] + sig(g[u]) * std::tanh(g[2 * H + u]);
        c.h[u] = sig(g[3 * H + u]) * std::tanh(c.c[u]);
      }
      input = c.h;
    }
    y[t] = head_bias;
    for (int u = 0; u < H; ++u) y[t] += head[u] * input[u];
  }
  return y;
}

std::vector<double> convnet(const nam::Model& m, const std::vector<double>& x) {
  Cursor w(m.weights);
  const int C = m.convnet.channels;
  Signal cur{x};
  for (int d : m.convnet.dilations) {
    Signal y = conv(w, cur, C, 2, d, !m.convnet.batchnorm);
    if (m.convnet.batchnorm) {
      std::vector<double> mean(C), var(C), gamma(C), beta(C);
      for (double& v : mean) v = w.next();
      for (double& v : var) v = w.next();
      for (double& v : gamma) v = w.next();
      for (double& v : beta) v = w.next();
      const double eps = w.next();
      for (int o = 0; o < C; ++o)
        for (double& v : y[o]) v = (v - mean[o]) / std::sqrt(var[o] + eps) * gamma[o] + beta[o];
    }
    for (auto& ch : y)
      for (double& v : ch) v = act(m.convnet.activation, v);
    cur = y;
  }
  const Signal out = conv(w, cur, 1, 1, 1, true);
  if (!w.done()) throw std::runtime_error("reference: weights left over");
  return out[0];
}

std::vector<double> linear(const nam::Model& m, const std::vector<double>& x) {
  Cursor w(m.weights);
  std::vector<double> taps(m.linear.receptive_field);
  for (double& v : taps) v = w.next();
  const double bias = m.linear.bias ? w.next() : 0;
  std::vector<double> y(x.size(), bias);
  for (std::size_t t = 0; t < x.size(); ++t)
    for (std::size_t k = 0; k < taps.size() && k <= t; ++k) y[t] += taps[k] * x[t - k];
  return y;
}

}  // namespace

std::vector<double> nam_reference(const nam::Model& m, const std::vector<float>& x, long prewarm) {
  std::vector<double> in(static_cast<std::size_t>(prewarm), 0.0);
  in.insert(in.end(), x.begin(), x.end());
  std::vector<double> y;
  switch (m.architecture) {
    case nam::Architecture::wavenet:
      y = wavenet(m, in);
      break;
    case nam::Architecture::lstm:
      y = lstm(m, in);
      break;
    case nam::Architecture::convnet:
      y = convnet(m, in);
      break;
    case nam::Architecture::linear:
      y = linear(m, in);
      break;
    case nam::Architecture::slimmable_container:
      throw std::runtime_error("reference: models of one size only");
  }
  return std::vector<double>(y.begin() + prewarm, y.end());
}

}  // namespace sigpu::test
