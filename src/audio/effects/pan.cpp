// pan: mono to stereo with the constant-power (sin/cos, -3 dB centre) law, or the balance of
// a stereo pair (the far side is attenuated linearly, the near side kept).
#include <cmath>
#include <numbers>

#include "audio/effects/effects.hpp"
#include "audio/effects/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

class Pan : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Pan>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    if (ports.input != 1 && ports.input != 2) {
      throw ParamError::port("input", "pan takes 1 or 2 channels, " + std::to_string(ports.input) +
                                          " are routed to it");
    }
    stereo_in_ = ports.input == 2;
    master_ = db_to_gain(p.number("gain_db", 0, -120, 24));
    pan_ = p.number("pan", 0, -1, 1);
    outputs_ = ports.output = 2;
    entries_ = {{0, 0, 0}, {1, stereo_in_ ? 1 : 0, 0}};
    weigh();
  }
  int check(std::string_view param, double value) const override {
    if (param == "pan") return check_range(param, value, -1, 1), 0;
    if (param == "gain_db") return check_range(param, value, -120, 24), 1;
    throw ParamError(std::string(param), "unknown parameter of pan");
  }
  void apply(int id, double value, Params& params) override {
    if (id == 0) {
      pan_ = value;
      weigh();
    } else {
      master_ = db_to_gain(value);
    }
    write(params, true);
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

std::unique_ptr<Effect> make_pan() {
  return std::make_unique<Pan>();
}

}  // namespace sigpu::audio::effects
