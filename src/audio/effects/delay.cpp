// delay: a feedback delay line per channel (dsp/delay.hpp). max_time_ms sizes the line; a
// runtime time_ms change up to it cross-fades between the two taps over one period.
#include <cmath>

#include "audio/effects/effects.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr double kMaxMs = 10000;
/// 4 GiB of float lines; also keeps the ring's 32-bit offsets from wrapping.
constexpr std::uint64_t kMaxRingSamples = std::uint64_t{1} << 30;

class Delay : public EffectBase<Delay> {
 public:
  Kind kind() const override { return Kind::delay; }
  void parse(ParamReader& p, Ports& ports) override {
    time_ms_ = p.number("time_ms", 250, 0, kMaxMs);
    max_ms_ = p.number("max_time_ms", std::max(1000.0, time_ms_), 0, kMaxMs);
    if (time_ms_ > max_ms_) {
      throw ParamError("time_ms", number_text(time_ms_) + " is above max_time_ms (" +
                                      number_text(max_ms_) + ")");
    }
    feedback_ = p.number("feedback", 0.3, -0.99, 0.99);
    mix_ = p.number("mix", 0.5, 0, 1);
    channels_ = ports.output = ports.input;
  }
  void configure(double sample_rate, int period) override {
    Effect::configure(sample_rate, period);
    check_time("time_ms", time_ms_);
    length_ = static_cast<std::uint32_t>(std::lround(max_ms_ / 1000 * sample_rate_)) + 1;
  }
  void setup(Plan& plan, const NodeIo& io) override {
    slot_ = static_cast<std::uint32_t>(plan.params.delay.size());
    plan.params.delay.emplace_back();
    // Offsets into the ring are 32-bit: 10 s lines on thousands of channels would wrap them
    // and the lines would overlap.
    if (std::uint64_t{plan.ring} + std::uint64_t{length_} * channels_ > kMaxRingSamples) {
      throw Error("delay: the graph's delay lines exceed " + std::to_string(kMaxRingSamples) +
                  " samples (max_time_ms x channels, all delays together)");
    }
    for (int c = 0; c < channels_; ++c) {
      plan.delay.push_back({io.in[c], io.out[c], plan.ring, plan.delay_state++, slot_});
      plan.ring += length_;
    }
    write(plan.params, false);
  }
  int check(std::string_view param, double value) const override {
    if (param == "time_ms") {
      check_range(param, value, 0, max_ms_);
      check_time(param, value);
      return 0;
    }
    if (param == "feedback") return check_range(param, value, -0.99, 0.99), 1;
    if (param == "mix") return check_range(param, value, 0, 1), 2;
    throw ParamError(std::string(param), "unknown parameter of delay");
  }
  void apply(int id, double value, Params& params) override {
    (id == 0 ? time_ms_ : id == 1 ? feedback_ : mix_) = value;
    write(params, id == 0);
  }

 private:
  std::uint32_t samples(double ms) const {
    return static_cast<std::uint32_t>(std::lround(ms / 1000 * sample_rate_));
  }
  void check_time(std::string_view param, double ms) const {
    if (samples(ms) < 1) {
      throw ParamError(std::string(param), number_text(ms) + " ms is less than one sample");
    }
  }
  void write(Params& params, bool ramp) const {
    auto& d = params.delay[slot_];
    d.to = samples(time_ms_);
    if (!ramp) d.from = d.to;
    d.length = length_;
    d.feedback = static_cast<float>(feedback_);
    d.mix = static_cast<float>(mix_);
    params.touch(Kind::delay, ramp);
  }
  double time_ms_ = 0, max_ms_ = 0, feedback_ = 0, mix_ = 0;
  int channels_ = 0;
  std::uint32_t length_ = 2, slot_ = 0;
};

}  // namespace

std::unique_ptr<Effect> make_delay() {
  return std::make_unique<Delay>();
}

}  // namespace sigpu::audio::effects
