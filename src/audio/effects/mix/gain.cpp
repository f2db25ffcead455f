// gain: every channel times one gain (dB), ramped over a period when it changes.
#include "audio/effects/mix/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr ParamSpec kParams[] = {
    {"gain_db", ParamType::number, 0, -120, 24, "dB", ParamUpdate::ramped, "gain"},
};

class Gain : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Gain>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    master_ = db_to_gain(p.number(kParams[0]));
    outputs_ = ports.output = ports.input;
    for (int c = 0; c < ports.input; ++c) entries_.push_back({c, c, 1.0});
  }
  void apply(int, double value, Plan& plan) override {
    master_ = db_to_gain(value);
    write(plan.data<MixKind>(), true);
  }
};

}  // namespace

const EffectDescriptor kGain{"gain", "every channel times one gain", kParams, construct<Gain>};

}  // namespace sigpu::audio::effects
