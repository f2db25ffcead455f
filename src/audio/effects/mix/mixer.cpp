// mixer: N inputs to M outputs through a matrix of linear gains (rows are outputs), times a
// master gain. Without a matrix, inputs are summed in contiguous groups (input i to output
// i*M/N when M <= N: a mix-down), or spread (output o takes input o*N/M when M > N).
#include <algorithm>

#include "audio/effects/mix/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr int kMaxChannels = 65536;

using enum ParamType;
using enum ParamUpdate;

constexpr ParamSpec kParams[] = {
    {"gain_db", number, 0, -120, 24, "dB", ramped, "master gain"},
    {"outputs", integer, 0, 1, kMaxChannels, "", fixed,
     "output channels, inputs summed in contiguous groups (without a matrix)"},
    {"matrix", list, 0, -16, 16, "", fixed,
     "rows of linear gains, one row per output, one gain per input"},
};

class Mixer : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Mixer>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    const int n = ports.input;
    master_ = db_to_gain(p.number(kParams[0]));
    const Json* matrix = p.raw("matrix");
    if (matrix) {
      read_matrix(*matrix, n);
    } else {
      outputs_ = p.integer(kParams[1]);
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
  void apply(int, double value, Plan& plan) override {
    master_ = db_to_gain(value);
    write(plan.data<MixKind>(), true);
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

const EffectDescriptor kMixer{"mixer", "N inputs to M outputs through a matrix of gains", kParams,
                              construct<Mixer>};

}  // namespace sigpu::audio::effects
