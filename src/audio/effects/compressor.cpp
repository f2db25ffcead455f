// compressor: per channel (dsp/compressor.hpp). The level comes from the side-chain port when
// one is routed: one channel drives every channel (linked), or one per channel.
#include "audio/effects/effects.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr NumberParam kParams[] = {
    {"threshold_db", -20, -100, 0}, {"ratio", 4, 1, 100},         {"knee_db", 6, 0, 48},
    {"attack_ms", 5, 0, 1000},      {"release_ms", 100, 0, 5000}, {"makeup_db", 0, -24, 48},
};
constexpr int kCount = sizeof(kParams) / sizeof(kParams[0]);
constexpr int kMakeup = 5;

class Compressor : public EffectBase<Compressor> {
 public:
  Kind kind() const override { return Kind::compressor; }
  bool has_sidechain() const override { return true; }
  void parse(ParamReader& p, Ports& ports) override {
    read_numbers(p, kParams, values_);
    if (ports.sidechain != 0 && ports.sidechain != 1 && ports.sidechain != ports.input) {
      throw ParamError::port("sidechain",
                             std::to_string(ports.sidechain) + " channels routed; 1 or " +
                                 std::to_string(ports.input) + " (as many as the input) expected");
    }
    channels_ = ports.output = ports.input;
  }
  void setup(Plan& plan, const NodeIo& io) override {
    slot_ = static_cast<std::uint32_t>(plan.params.compressor.size());
    plan.params.compressor.emplace_back();
    for (int c = 0; c < channels_; ++c) {
      const std::uint32_t side = io.side.empty() ? io.in[c] : io.side[io.side.size() == 1 ? 0 : c];
      plan.compressor.push_back({io.in[c], side, io.out[c], plan.compressor_state++, slot_});
    }
    write(plan.params, false);
  }
  int check(std::string_view param, double value) const override {
    return check_number(kParams, "compressor", param, value);
  }
  void apply(int id, double value, Params& params) override {
    values_[id] = value;
    write(params, id == kMakeup);
  }

 private:
  // Threshold, ratio and knee act through the smoothed gain reduction; only makeup is a gain
  // applied directly, so only it is ramped.
  void write(Params& params, bool ramp) const {
    auto& c = params.compressor[slot_];
    c.threshold_db = static_cast<float>(values_[0]);
    c.ratio = static_cast<float>(values_[1]);
    c.knee_db = static_cast<float>(values_[2]);
    c.attack = smoothing_coefficient(values_[3] / 1000, sample_rate_);
    c.release = smoothing_coefficient(values_[4] / 1000, sample_rate_);
    c.makeup.to = static_cast<float>(db_to_gain(values_[kMakeup]));
    if (!ramp) c.makeup.from = c.makeup.to;
    params.touch(Kind::compressor, ramp);
  }
  double values_[kCount]{};
  int channels_ = 0;
  std::uint32_t slot_ = 0;
};

}  // namespace

std::unique_ptr<Effect> make_compressor() {
  return std::make_unique<Compressor>();
}

}  // namespace sigpu::audio::effects
