// compressor: per channel (compressor.hpp). The level comes from the side-chain port when one
// is routed: one channel drives every channel (linked), or one per channel.
#include "audio/effect.hpp"

namespace sigpu::audio::effects {
namespace {

using enum ParamType;
using enum ParamUpdate;

// Threshold, ratio and knee act through the smoothed gain reduction; only makeup is a gain
// applied directly, so only it is ramped.
constexpr ParamSpec kParams[] = {
    {"threshold_db", number, -20, -100, 0, "dB", smoothed, "compresses above this level"},
    {"ratio", number, 4, 1, 100, "", smoothed, "input dB over the threshold per output dB"},
    {"knee_db", number, 6, 0, 48, "dB", smoothed, "width of the soft knee"},
    {"attack_ms", number, 5, 0, 1000, "ms", smoothed, "time constant of rising reduction"},
    {"release_ms", number, 100, 0, 5000, "ms", smoothed, "time constant of falling reduction"},
    {"makeup_db", number, 0, -24, 48, "dB", ramped, "gain after compression"},
};
constexpr int kCount = std::size(kParams);
constexpr int kMakeup = 5;

class Compressor : public EffectBase<Compressor> {
 public:
  Kind kind() const override { return kind_of<CompressorKind>(); }
  void parse(ParamReader& p, Ports& ports) override {
    for (int i = 0; i < kCount; ++i) values_[i] = p.number(kParams[i]);
    if (ports.sidechain != 0 && ports.sidechain != 1 && ports.sidechain != ports.input) {
      throw ParamError::port("sidechain",
                             std::to_string(ports.sidechain) + " channels routed; 1 or " +
                                 std::to_string(ports.input) + " (as many as the input) expected");
    }
    channels_ = ports.output = ports.input;
  }
  void setup(Plan& plan, const NodeIo& io) override {
    auto& d = plan.data<CompressorKind>();
    slot_ = static_cast<std::uint32_t>(d.params.size());
    d.params.emplace_back();
    for (int c = 0; c < channels_; ++c) {
      const std::uint32_t side = io.side.empty() ? io.in[c] : io.side[io.side.size() == 1 ? 0 : c];
      d.jobs.push_back({io.in[c], side, io.out[c], d.states++, slot_});
    }
    write(d, false);
  }
  void apply(int id, double value, Plan& plan) override {
    values_[id] = value;
    write(plan.data<CompressorKind>(), kParams[id].update == ramped);
  }

 private:
  void write(CompressorKind::Data& d, bool ramp) const {
    auto& c = d.params[slot_];
    c.threshold_db = static_cast<float>(values_[0]);
    c.ratio = static_cast<float>(values_[1]);
    c.knee_db = static_cast<float>(values_[2]);
    c.attack = smoothing_coefficient(values_[3] / 1000, sample_rate_);
    c.release = smoothing_coefficient(values_[4] / 1000, sample_rate_);
    c.makeup.to = static_cast<float>(db_to_gain(values_[kMakeup]));
    if (!ramp) c.makeup.from = c.makeup.to;
    d.touch(ramp);
  }
  double values_[kCount]{};
  int channels_ = 0;
  std::uint32_t slot_ = 0;
};

}  // namespace

const EffectDescriptor kCompressor{
    "compressor", "feed-forward soft-knee compressor per channel, optional side-chain", kParams,
    construct<Compressor>, true};

}  // namespace sigpu::audio::effects
