// gate: a noise gate per channel (gate.hpp).
#include "audio/effect.hpp"

namespace sigpu::audio::effects {
namespace {

using enum ParamType;
using enum ParamUpdate;

// The gain is smoothed already, so new values need no ramp.
constexpr ParamSpec kParams[] = {
    {"threshold_db", number, -60, -140, 0, "dB", smoothed, "opens above this level"},
    {"attack_ms", number, 1, 0, 1000, "ms", smoothed, "time constant of opening"},
    {"hold_ms", number, 20, 0, 5000, "ms", smoothed, "stays open this long after the level falls"},
    {"release_ms", number, 100, 0, 5000, "ms", smoothed, "time constant of closing"},
    {"range_db", number, -80, -140, 0, "dB", smoothed, "gain when closed"},
};
constexpr int kCount = std::size(kParams);

class Gate : public EffectBase<Gate> {
 public:
  Kind kind() const override { return kind_of<GateKind>(); }
  void parse(ParamReader& p, Ports& ports) override {
    for (int i = 0; i < kCount; ++i) values_[i] = p.number(kParams[i]);
    channels_ = ports.output = ports.input;
  }
  void setup(Plan& plan, const NodeIo& io) override {
    auto& d = plan.data<GateKind>();
    slot_ = static_cast<std::uint32_t>(d.params.size());
    d.params.emplace_back();
    for (int c = 0; c < channels_; ++c) d.jobs.push_back({io.in[c], io.out[c], d.states++, slot_});
    write(d);
  }
  void apply(int id, double value, Plan& plan) override {
    values_[id] = value;
    write(plan.data<GateKind>());
  }

 private:
  void write(GateKind::Data& d) const {
    auto& g = d.params[slot_];
    g.threshold = static_cast<float>(db_to_gain(values_[0]));
    g.attack = smoothing_coefficient(values_[1] / 1000, sample_rate_);
    g.hold = static_cast<std::uint32_t>(values_[2] / 1000 * sample_rate_ + 0.5);
    g.release = smoothing_coefficient(values_[3] / 1000, sample_rate_);
    g.floor = static_cast<float>(db_to_gain(values_[4]));
    d.touch(false);
  }
  double values_[kCount]{};
  int channels_ = 0;
  std::uint32_t slot_ = 0;
};

}  // namespace

const EffectDescriptor kGate{"gate", "noise gate per channel", kParams, construct<Gate>};

}  // namespace sigpu::audio::effects
