// pan: mono to stereo with the constant-power (sin/cos, -3 dB centre) law, or the balance of
// a stereo pair (the far side is attenuated linearly, the near side kept).
#include <cmath>
#include <numbers>

#include "audio/effects/mix/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

using enum ParamType;
using enum ParamUpdate;

constexpr ParamSpec kParams[] = {
    {"pan", number, 0, -1, 1, "", ramped, "-1 left, 0 centre, 1 right"},
    {"gain_db", number, 0, -120, 24, "dB", ramped, "gain"},
};

class Pan : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Pan>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    if (ports.input != 1 && ports.input != 2) {
      throw ParamError::port("input", "pan takes 1 or 2 channels, " + std::to_string(ports.input) +
                                          " are routed to it");
    }
    stereo_in_ = ports.input == 2;
    master_ = db_to_gain(p.number(kParams[1]));
    pan_ = p.number(kParams[0]);
    outputs_ = ports.output = 2;
    entries_ = {{0, 0, 0}, {1, stereo_in_ ? 1 : 0, 0}};
    weigh();
  }
  void apply(int id, double value, Plan& plan) override {
    if (id == 0) {
      pan_ = value;
      weigh();
    } else {
      master_ = db_to_gain(value);
    }
    write(plan.data<MixKind>(), true);
  }

 private:
  void weigh() {
    if (stereo_in_) {
      entries_[0].weight = std::min(1.0, 1.0 - pan_);
      entries_[1].weight = std::min(1.0, 1.0 + pan_);
    } else {
      const double theta = (pan_ + 1.0) * std::numbers::pi / 4.0;
      entries_[0].weight = std::cos(theta);
      entries_[1].weight = std::sin(theta);
    }
  }
  bool stereo_in_ = false;
  double pan_ = 0;
};

}  // namespace

const EffectDescriptor kPan{"pan", "mono to stereo (constant power), or a stereo balance", kParams,
                            construct<Pan>};

}  // namespace sigpu::audio::effects
