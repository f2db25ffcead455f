// ConvNet and Linear on the CPU. ConvNet: blocks of a kernel-2 dilated conv (bias, or batch
// norm folded to scale + offset) and an activation, then a linear head. Linear: an FIR.
#include <algorithm>
#include <cmath>
#include <vector>

#include "nam/activation.hpp"
#include "nam/cpu_engine.hpp"
#include "nam/layout.hpp"
#include "nam/ring.hpp"

namespace sigpu::nam {
namespace {

struct Block {
  int in = 1, dilation = 1;
  std::vector<float> w;              // [out][in][2], file order
  std::vector<float> scale, offset;  // y = conv * scale + offset (bias: scale 1)
  Ring input;
};

class ConvNetEngine final : public CpuEngine {
 public:
  ConvNetEngine(const Model& m, int max_frames) : config_(m.convnet) {
    const ConvNetLayout layout = convnet_layout(m.convnet);
    const float* w = m.weights.data();
    const int ch = config_.channels;
    for (const ConvNetBlockOffsets& bo : layout.blocks) {
      Block b;
      b.in = bo.in_channels;
      b.dilation = bo.dilation;
      b.w.assign(w + bo.conv_w, w + bo.conv_w + 2L * ch * b.in);
      b.scale.assign(ch, 1.0f);
      b.offset.assign(ch, 0.0f);
      if (bo.conv_b >= 0) b.offset.assign(w + bo.conv_b, w + bo.conv_b + ch);
      if (bo.bn >= 0) {
        // running mean, running var, weight, bias, eps (NeuralAmpModelerCore's order).
        const float* mean = w + bo.bn;
        const float eps = w[bo.bn + 4L * ch];
        for (int o = 0; o < ch; ++o) {
          b.scale[o] = mean[2 * ch + o] / std::sqrt(eps + mean[ch + o]);
          b.offset[o] = mean[3 * ch + o] - b.scale[o] * mean[o];
        }
      }
      b.input = Ring(b.in, b.dilation, max_frames);
      blocks_.push_back(std::move(b));
    }
    head_.assign(w + layout.head_w, w + layout.head_w + ch);
    head_bias_ = w[layout.head_b];
    y_.resize(ch);
  }

  void clear() override {
    for (Block& b : blocks_) b.input.clear();
    pos_ = 0;
  }

  void process(const float* in, float* out, int frames) noexcept override {
    const int ch = config_.channels;
    for (int t = 0; t < frames; ++t) blocks_[0].input.row(pos_ + t)[0] = in[t];
    for (std::size_t bi = 0; bi < blocks_.size(); ++bi) {
      Block& b = blocks_[bi];
      for (int t = 0; t < frames; ++t) {
        const long long now = pos_ + t;
        const float* past = b.input.row(now - b.dilation);
        const float* cur = b.input.row(now);
        float* y = bi + 1 < blocks_.size() ? blocks_[bi + 1].input.row(now) : y_.data();
        for (int o = 0; o < ch; ++o) {
          const float* wo = b.w.data() + static_cast<std::size_t>(o) * b.in * 2;
          float s = 0;
          for (int i = 0; i < b.in; ++i) s += wo[2 * i] * past[i] + wo[2 * i + 1] * cur[i];
          y[o] = activate(config_.activation, s * b.scale[o] + b.offset[o]);
        }
        if (bi + 1 == blocks_.size()) {
          float s = 0;
          for (int o = 0; o < ch; ++o) s += head_[o] * y[o];
          out[t] = s + head_bias_;
        }
      }
    }
    pos_ += frames;
  }

 private:
  ConvNet config_;
  std::vector<Block> blocks_;
  std::vector<float> head_, y_;
  float head_bias_ = 0;
  long long pos_ = 0;
};

class LinearEngine final : public CpuEngine {
 public:
  LinearEngine(const Model& m, int max_frames)
      : taps_(m.weights.begin(), m.weights.begin() + m.linear.receptive_field),
        bias_(m.linear.bias ? m.weights[m.linear.receptive_field] : 0.0f),
        input_(1, m.linear.receptive_field - 1, max_frames) {}

  void clear() override {
    input_.clear();
    pos_ = 0;
  }

  void process(const float* in, float* out, int frames) noexcept override {
    for (int t = 0; t < frames; ++t) *input_.row(pos_ + t) = in[t];
    for (int t = 0; t < frames; ++t) {
      float s = 0;
      for (std::size_t k = 0; k < taps_.size(); ++k)
        s += taps_[k] * *input_.row(pos_ + t - static_cast<long long>(k));
      out[t] = s + bias_;
    }
    pos_ += frames;
  }

 private:
  std::vector<float> taps_;  // newest sample first
  float bias_;
  Ring input_;
  long long pos_ = 0;
};

}  // namespace

std::unique_ptr<CpuEngine> make_convnet_engine(const Model& m, int max_frames) {
  return std::make_unique<ConvNetEngine>(m, max_frames);
}
std::unique_ptr<CpuEngine> make_linear_engine(const Model& m, int max_frames) {
  return std::make_unique<LinearEngine>(m, max_frames);
}

}  // namespace sigpu::nam
