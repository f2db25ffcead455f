// LSTM on the CPU: PyTorch's cell (gates i, f, g, o), layers stacked, a linear head. The
// state starts from the h and c stored in the file.
#include <algorithm>
#include <vector>

#include "nam/activation.hpp"
#include "nam/cpu_engine.hpp"
#include "nam/layout.hpp"

namespace sigpu::nam {
namespace {

struct Cell {
  int in = 1, hidden = 1;
  std::vector<float> w;  // [4 hidden][in + hidden]
  std::vector<float> b;  // [4 hidden]
  std::vector<float> h0, c0;
  std::vector<float> xh;  // [in + hidden]: this step's input, then the hidden state
  std::vector<float> c, gates;

  void step() {
    const int cols = in + hidden;
    for (int r = 0; r < 4 * hidden; ++r) {
      const float* wr = w.data() + static_cast<std::size_t>(r) * cols;
      float s = 0;
      for (int j = 0; j < cols; ++j) s += wr[j] * xh[j];
      gates[r] = s + b[r];
    }
    for (int u = 0; u < hidden; ++u) {
      c[u] =
          sigmoid(gates[hidden + u]) * c[u] + sigmoid(gates[u]) * fast_tanh(gates[2 * hidden + u]);
      xh[in + u] = sigmoid(gates[3 * hidden + u]) * fast_tanh(c[u]);
    }
  }
  const float* h() const { return xh.data() + in; }
};

class LstmEngine final : public CpuEngine {
 public:
  explicit LstmEngine(const Model& m) {
    const LstmLayout layout = lstm_layout(m.lstm);
    const float* w = m.weights.data();
    const int hidden = m.lstm.hidden_size;
    for (const LstmLayerOffsets& lo : layout.layers) {
      Cell c;
      c.in = lo.input_size;
      c.hidden = hidden;
      const long cols = lo.input_size + hidden;
      c.w.assign(w + lo.w, w + lo.w + 4L * hidden * cols);
      c.b.assign(w + lo.b, w + lo.b + 4L * hidden);
      c.h0.assign(w + lo.h0, w + lo.h0 + hidden);
      c.c0.assign(w + lo.c0, w + lo.c0 + hidden);
      c.xh.resize(cols);
      c.c.resize(hidden);
      c.gates.resize(4L * hidden);
      cells_.push_back(std::move(c));
    }
    head_.assign(w + layout.head_w, w + layout.head_w + hidden);
    head_bias_ = w[layout.head_b];
    clear();
  }

  void clear() override {
    for (Cell& c : cells_) {
      std::copy(c.h0.begin(), c.h0.end(), c.xh.begin() + c.in);
      c.c = c.c0;
    }
  }

  void process(const float* in, float* out, int frames) noexcept override {
    for (int t = 0; t < frames; ++t) {
      cells_[0].xh[0] = in[t];
      cells_[0].step();
      for (std::size_t l = 1; l < cells_.size(); ++l) {
        std::copy(cells_[l - 1].h(), cells_[l - 1].h() + cells_[l].in, cells_[l].xh.begin());
        cells_[l].step();
      }
      const float* h = cells_.back().h();
      float y = 0;
      for (std::size_t u = 0; u < head_.size(); ++u) y += head_[u] * h[u];
      out[t] = y + head_bias_;
    }
  }

 private:
  std::vector<Cell> cells_;
  std::vector<float> head_;
  float head_bias_ = 0;
};

}  // namespace

std::unique_ptr<CpuEngine> make_lstm_engine(const Model& m, int) {
  return std::make_unique<LstmEngine>(m);
}

}  // namespace sigpu::nam
