// delay: a feedback delay line per channel (delay.hpp). max_time_ms sizes the line; a runtime
// time_ms change up to it cross-fades between the two taps over one period.
#include <cmath>

#include "audio/effect.hpp"

namespace sigpu::audio::effects {
namespace {

using enum ParamType;
using enum ParamUpdate;

constexpr double kMaxMs = 10000;
/// 4 GiB of float lines; also keeps the ring's 32-bit offsets from wrapping.
constexpr std::uint64_t kMaxRingSamples = std::uint64_t{1} << 30;

constexpr ParamSpec kParams[] = {
    {"time_ms", number, 250, 0, kMaxMs, "ms", ramped, "delay; at most max_time_ms"},
    {"max_time_ms", number, 1000, 0, kMaxMs, "ms", fixed,
     "longest delay (sizes the line); default: 1000 or time_ms if longer"},
    {"feedback", number, 0.3, -0.99, 0.99, "", smoothed, "share of the output fed back"},
    {"mix", number, 0.5, 0, 1, "", smoothed, "0: dry only, 1: wet only"},
};
enum { kTime, kMaxTime, kFeedback, kMix };

class Delay : public EffectBase<Delay> {
 public:
  Kind kind() const override { return kind_of<DelayKind>(); }
  void parse(ParamReader& p, Ports& ports) override {
    time_ms_ = p.number(kParams[kTime]);
    ParamSpec max = kParams[kMaxTime];
    max.fallback = std::max(max.fallback, time_ms_);
    max_ms_ = p.number(max);
    if (time_ms_ > max_ms_) {
      throw ParamError("time_ms", number_text(time_ms_) + " is above max_time_ms (" +
                                      number_text(max_ms_) + ")");
    }
    feedback_ = p.number(kParams[kFeedback]);
    mix_ = p.number(kParams[kMix]);
    channels_ = ports.output = ports.input;
  }
  void configure(double sample_rate, int period) override {
    Effect::configure(sample_rate, period);
    check_time("time_ms", time_ms_);
    length_ = static_cast<std::uint32_t>(std::lround(max_ms_ / 1000 * sample_rate_)) + 1;
  }
  void setup(Plan& plan, const NodeIo& io) override {
    auto& d = plan.data<DelayKind>();
    slot_ = static_cast<std::uint32_t>(d.params.size());
    d.params.emplace_back();
    // Offsets into the ring are 32-bit: 10 s lines on thousands of channels would wrap them
    // and the lines would overlap.
    if (std::uint64_t{d.scratch} + std::uint64_t{length_} * channels_ > kMaxRingSamples) {
      throw Error("delay: the graph's delay lines exceed " + std::to_string(kMaxRingSamples) +
                  " samples (max_time_ms x channels, all delays together)");
    }
    for (int c = 0; c < channels_; ++c) {
      d.jobs.push_back({io.in[c], io.out[c], d.scratch, d.states++, slot_});
      d.scratch += length_;
    }
    write(d, false);
  }
  void apply(int id, double value, Plan& plan) override {
    (id == kTime ? time_ms_ : id == kFeedback ? feedback_ : mix_) = value;
    write(plan.data<DelayKind>(), id == kTime);
  }

 protected:
  void validate(std::string_view param, int id, double value) const override {
    if (id != kTime) return;
    if (value > max_ms_) {
      throw ParamError(std::string(param), number_text(value) + " is out of range [0, " +
                                               number_text(max_ms_) + "] (max_time_ms)");
    }
    check_time(param, value);
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
  void write(DelayKind::Data& d, bool ramp) const {
    auto& p = d.params[slot_];
    p.to = samples(time_ms_);
    if (!ramp) p.from = p.to;
    p.length = length_;
    p.feedback = static_cast<float>(feedback_);
    p.mix = static_cast<float>(mix_);
    d.touch(ramp);
  }
  double time_ms_ = 0, max_ms_ = 0, feedback_ = 0, mix_ = 0;
  int channels_ = 0;
  std::uint32_t length_ = 2, slot_ = 0;
};

}  // namespace

const EffectDescriptor kDelay{"delay", "feedback delay line per channel", kParams,
                              construct<Delay>};

}  // namespace sigpu::audio::effects
