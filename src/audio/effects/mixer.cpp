// mixer: N inputs to M outputs through a matrix of linear gains (rows are outputs), times a
// master gain. Without a matrix, inputs are summed in contiguous groups (input i to output
// i*M/N when M <= N: a mix-down), or spread (output o takes input o*N/M when M > N).
#include <algorithm>

#include "audio/effects/effects.hpp"
#include "audio/effects/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr int kMaxChannels = 65536;

class Mixer : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Mixer>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    const int n = ports.input;
    master_ = db_to_gain(p.number("gain_db", 0, -120, 24));
    const Json* matrix = p.raw("matrix");
    if (matrix) {
      read_matrix(*matrix, n);
    } else {
      outputs_ = p.integer("outputs", 0, 1, kMaxChannels);
      if (outputs_ == 0) throw ParamError("outputs", "give 'outputs' or a 'matrix'");
      const long m = outputs_;
      if (m <= n) {
        for (long i = 0; i < n; ++i) entries_.push_back({static_cast<int>(i * m / n), int(i), 1});
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.out < b.out; });
      } else {
        for (long o = 0; o < m; ++o) entries_.push_back({int(o), static_cast<int>(o * n / m), 1});
      }
    }
    ports.output = outputs_;
  }
  int check(std::string_view param, double value) const override {
    if (param != "gain_db") throw ParamError(std::string(param), "unknown parameter of mixer");
    check_range(param, value, -120, 24);
    return 0;
  }
  void apply(int, double value, Params& params) override {
    master_ = db_to_gain(value);
    write(params, true);
  }

 private:
  void read_matrix(const Json& matrix, int n) {
    if (!matrix.is_array() || matrix.empty() || matrix.size() > kMaxChannels) {
      throw ParamError("matrix", "an array of rows (one per output) is expected");
    }
    outputs_ = static_cast<int>(matrix.size());
    for (int o = 0; o < outputs_; ++o) {
      const std::string name = "matrix[" + std::to_string(o) + "]";
      const Json& row = matrix[o];
      if (!row.is_array() || static_cast<int>(row.size()) != n) {
        throw ParamError::port("input", name + " must have one gain per input channel (" +
                                            std::to_string(n) + " routed)");
      }
      for (int i = 0; i < n; ++i) {
        if (!row[i].is_number()) throw ParamError(name, "numbers are expected");
        const double w = check_range(name, row[i].get<double>(), -16, 16);
        if (w != 0) entries_.push_back({o, i, w});
      }
    }
  }
};

}  // namespace

std::unique_ptr<Effect> make_mixer() {
  return std::make_unique<Mixer>();
}

}  // namespace sigpu::audio::effects
