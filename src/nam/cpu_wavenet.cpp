// WaveNet on the CPU. Each layer keeps a ring of its input frames (channels contiguous per
// frame) deep enough for its dilated taps; a period is computed layer by layer
// (cpu_wavenet_layer.hpp), frame by frame. Weights are repacked input-major ([k][in][out]) so
// the inner loops run over output channels and vectorise.
#include <algorithm>
#include <cstring>
#include <vector>

#include "nam/activation.hpp"
#include "nam/cpu_engine.hpp"
#include "nam/cpu_wavenet_layer.hpp"
#include "nam/layout.hpp"
#include "nam/ring.hpp"

namespace sigpu::nam {
namespace {

// w[o][i] (file order, `cols` inputs) -> t[i][o].
std::vector<float> transpose(const float* w, int rows, int cols) {
  std::vector<float> t(static_cast<std::size_t>(rows) * cols);
  for (int o = 0; o < rows; ++o)
    for (int i = 0; i < cols; ++i) t[static_cast<std::size_t>(i) * rows + o] = w[o * cols + i];
  return t;
}

// y[0..out) += sum_i w[i][0..out) * x[i] with input-major weights (the rechannel and head
// 1x1s; the layers, where the time goes, use cpu_wavenet_layer.hpp).
void accumulate(float* __restrict y, const float* __restrict w, const float* __restrict x, int in,
                int out) {
  for (int i = 0; i < in; ++i) {
    const float xi = x[i];
    const float* __restrict wi = w + static_cast<std::size_t>(i) * out;
    for (int o = 0; o < out; ++o) y[o] += wi[o] * xi;
  }
}

struct Layer {
  int dilation = 1;
  std::vector<float> conv;   // [k][channels][zc]
  std::vector<float> bias;   // [zc]
  std::vector<float> mixin;  // [zc] (condition_size is 1)
  std::vector<float> out;    // [channels][channels]
  std::vector<float> out_bias;
  Ring input;
};

struct Array {
  LayerArray config;
  int zc = 1;                    // dilated conv outputs: 2 channels when gated
  std::vector<float> rechannel;  // [input_size][channels]
  std::vector<Layer> layers;
  std::vector<float> head;       // [channels][head_size]
  std::vector<float> head_bias;  // [head_size], zeros without bias
  LayerFn layer = nullptr;
};

class WaveNetEngine final : public CpuEngine {
 public:
  WaveNetEngine(const Model& m, int max_frames) {
    const WaveNetLayout layout = wavenet_layout(m.wavenet);
    const float* w = m.weights.data();
    int widest = 1;
    for (std::size_t a = 0; a < m.wavenet.layer_arrays.size(); ++a) {
      const LayerArray& c = m.wavenet.layer_arrays[a];
      const WaveNetArrayOffsets& off = layout.arrays[a];
      Array arr;
      arr.config = c;
      arr.zc = c.gated ? 2 * c.channels : c.channels;
      arr.rechannel = transpose(w + off.rechannel_w, c.channels, c.input_size);
      for (const WaveNetLayerOffsets& lo : off.layers) {
        Layer l;
        l.dilation = lo.dilation;
        // File order [out][in][k] -> [k][in][out].
        l.conv.resize(static_cast<std::size_t>(c.kernel_size) * c.channels * arr.zc);
        for (int o = 0; o < arr.zc; ++o)
          for (int i = 0; i < c.channels; ++i)
            for (int k = 0; k < c.kernel_size; ++k)
              l.conv[(static_cast<std::size_t>(k) * c.channels + i) * arr.zc + o] =
                  w[lo.conv_w + (static_cast<long>(o) * c.channels + i) * c.kernel_size + k];
        l.bias.assign(w + lo.conv_b, w + lo.conv_b + arr.zc);
        l.mixin = transpose(w + lo.mixin_w, arr.zc, c.condition_size);
        l.out = transpose(w + lo.out_w, c.channels, c.channels);
        l.out_bias.assign(w + lo.out_b, w + lo.out_b + c.channels);
        l.input = Ring(c.channels, static_cast<long>(c.kernel_size - 1) * lo.dilation, max_frames);
        arr.layers.push_back(std::move(l));
      }
      arr.layer = layer_function(c.channels, arr.zc);
      arr.head = transpose(w + off.head_w, c.head_size, c.channels);
      arr.head_bias.assign(c.head_size, 0.0f);
      if (off.head_b >= 0) arr.head_bias.assign(w + off.head_b, w + off.head_b + c.head_size);
      widest = std::max({widest, arr.zc, c.channels, c.head_size});
      arrays_.push_back(std::move(arr));
    }
    head_scale_ = m.wavenet.head_scale;
    const std::size_t frame_floats = static_cast<std::size_t>(max_frames) * widest;
    cond_.resize(max_frames);
    array_out_.resize(frame_floats);
    head_acc_.resize(frame_floats);
    head_out_.resize(frame_floats);
    z_.resize(frame_floats);
  }

  void clear() override {
    for (Array& a : arrays_)
      for (Layer& l : a.layers) l.input.clear();
    pos_ = 0;
  }

  void process(const float* in, float* out, int frames) noexcept override {
    std::copy(in, in + frames, cond_.begin());
    const float* source = cond_.data();  // this array's input, [frame][input_size]
    int source_width = 1;
    for (std::size_t a = 0; a < arrays_.size(); ++a) {
      run_array(arrays_[a], source, source_width, frames, a == 0);
      source = array_out_.data();
      source_width = arrays_[a].config.channels;
    }
    for (int t = 0; t < frames; ++t) out[t] = head_scale_ * head_out_[t];
    pos_ += frames;
  }

 private:
  void run_array(Array& arr, const float* source, int source_width, int frames, bool first) {
    const LayerArray& c = arr.config;
    const int ch = c.channels, zc = arr.zc;
    // The head accumulator starts from the previous array's head output (head_size of the
    // previous array == channels of this one), or from zero.
    if (first)
      std::fill(head_acc_.begin(), head_acc_.begin() + frames * ch, 0.0f);
    else
      std::copy(head_out_.begin(), head_out_.begin() + frames * ch, head_acc_.begin());

    for (int t = 0; t < frames; ++t) {
      float* row = arr.layers[0].input.row(pos_ + t);
      std::fill(row, row + ch, 0.0f);
      accumulate(row, arr.rechannel.data(), source + t * source_width, c.input_size, ch);
    }
    LayerPass p{};
    p.channels = ch;
    p.zc = zc;
    p.kernel = c.kernel_size;
    p.gated = c.gated;
    p.activation = c.activation;
    p.array_out = array_out_.data();
    p.z = z_.data();
    p.head = head_acc_.data();
    p.cond = cond_.data();
    p.pos = pos_;
    p.frames = frames;
    for (std::size_t li = 0; li < arr.layers.size(); ++li) {
      const Layer& l = arr.layers[li];
      p.conv = l.conv.data();
      p.bias = l.bias.data();
      p.mixin = l.mixin.data();
      p.out = l.out.data();
      p.out_bias = l.out_bias.data();
      p.dilation = l.dilation;
      p.ring = l.input.data();
      p.ring_mask = l.input.mask();
      Ring* next = li + 1 < arr.layers.size() ? &arr.layers[li + 1].input : nullptr;
      p.next = next ? next->data() : nullptr;
      p.next_mask = next ? next->mask() : 0;
      arr.layer(p);
    }
    for (int t = 0; t < frames; ++t) {
      float* h = head_out_.data() + static_cast<std::size_t>(t) * c.head_size;
      std::copy(arr.head_bias.begin(), arr.head_bias.end(), h);
      accumulate(h, arr.head.data(), head_acc_.data() + static_cast<std::size_t>(t) * ch, ch,
                 c.head_size);
    }
  }

  std::vector<Array> arrays_;
  float head_scale_ = 1;
  long long pos_ = 0;
  std::vector<float> cond_, array_out_, head_acc_, head_out_, z_;
};

}  // namespace

std::unique_ptr<CpuEngine> make_wavenet_engine(const Model& m, int max_frames) {
  return std::make_unique<WaveNetEngine>(m, max_frames);
}

}  // namespace sigpu::nam
