// gate: a noise gate per channel (dsp/gate.hpp).
#include "audio/effects/effects.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr NumberParam kParams[] = {
    {"threshold_db", -60, -140, 0}, {"attack_ms", 1, 0, 1000},  {"hold_ms", 20, 0, 5000},
    {"release_ms", 100, 0, 5000},   {"range_db", -80, -140, 0},
};
constexpr int kCount = sizeof(kParams) / sizeof(kParams[0]);

class Gate : public EffectBase<Gate> {
 public:
  Kind kind() const override { return Kind::gate; }
  void parse(ParamReader& p, Ports& ports) override {
    read_numbers(p, kParams, values_);
    channels_ = ports.output = ports.input;
  }
  void setup(Plan& plan, const NodeIo& io) override {
    slot_ = static_cast<std::uint32_t>(plan.params.gate.size());
    plan.params.gate.emplace_back();
    for (int c = 0; c < channels_; ++c) {
      plan.gate.push_back({io.in[c], io.out[c], plan.gate_state++, slot_});
    }
    write(plan.params);
  }
  int check(std::string_view param, double value) const override {
    return check_number(kParams, "gate", param, value);
  }
  void apply(int id, double value, Params& params) override {
    values_[id] = value;
    write(params);
  }

 private:
  // The gain is smoothed already, so new values need no ramp.
  void write(Params& params) const {
    auto& g = params.gate[slot_];
    g.threshold = static_cast<float>(db_to_gain(values_[0]));
    g.attack = smoothing_coefficient(values_[1] / 1000, sample_rate_);
    g.hold = static_cast<std::uint32_t>(values_[2] / 1000 * sample_rate_ + 0.5);
    g.release = smoothing_coefficient(values_[3] / 1000, sample_rate_);
    g.floor = static_cast<float>(db_to_gain(values_[4]));
    params.touch(Kind::gate, false);
  }
  double values_[kCount]{};
  int channels_ = 0;
  std::uint32_t slot_ = 0;
};

}  // namespace

std::unique_ptr<Effect> make_gate() {
  return std::make_unique<Gate>();
}

}  // namespace sigpu::audio::effects
