// gain: every channel times one gain (dB), ramped over a period when it changes.
#include "audio/effects/effects.hpp"
#include "audio/effects/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr double kMinDb = -120, kMaxDb = 24;

class Gain : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Gain>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    master_ = db_to_gain(p.number("gain_db", 0, kMinDb, kMaxDb));
    outputs_ = ports.output = ports.input;
    for (int c = 0; c < ports.input; ++c) entries_.push_back({c, c, 1.0});
  }
  int check(std::string_view param, double value) const override {
    if (param != "gain_db") throw ParamError(std::string(param), "unknown parameter of gain");
    check_range(param, value, kMinDb, kMaxDb);
    return 0;
  }
  void apply(int, double value, Params& params) override {
    master_ = db_to_gain(value);
    write(params, true);
  }
};

}  // namespace

std::unique_ptr<Effect> make_gain() {
  return std::make_unique<Gain>();
}

}  // namespace sigpu::audio::effects
