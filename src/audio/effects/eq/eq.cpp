// eq: a cascade of RBJ biquads, the same bands on every channel. Runtime parameters are
// band.K.freq, band.K.gain_db and band.K.q (K from 0); a change is a one-period coefficient
// ramp (eq.hpp).
#include <charconv>

#include "audio/effect.hpp"
#include "audio/effects/eq/biquad_design.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr int kMaxBands = 64;

using enum ParamType;
using enum ParamUpdate;

constexpr ParamSpec kParams[] = {
    {"bands", list, 0, 1, kMaxBands, "", fixed, "band objects: type, freq, gain_db, q", {}, true},
    {"band.K.type", choice, 0, 0, 0, "", fixed, "filter shape; default peak",
     "peak, lowshelf, highshelf, lowpass, highpass, bandpass, notch"},
    {"band.K.freq",
     number,
     1000,
     1e-3,
     1e6,
     "Hz",
     ramped,
     "centre or corner; below Nyquist",
     {},
     true},
    {"band.K.gain_db", number, 0, -48, 48, "dB", ramped, "peak and shelf gain"},
    {"band.K.q", number, 0.7071067811865476, 0.025, 100, "", ramped, "bandwidth"},
};
enum { kBands, kType, kFreq, kGain, kQ };
/// Runtime ids: band * kFields + the field (freq, gain_db, q).
constexpr int kFields = 3;

class Eq : public EffectBase<Eq> {
 public:
  Kind kind() const override { return kind_of<EqKind>(); }

  void parse(ParamReader& p, Ports& ports) override {
    const Json* bands = p.raw("bands");
    if (!bands || !bands->is_array() || bands->empty() || bands->size() > kMaxBands) {
      throw ParamError(
          "bands", "an array of 1 to " + std::to_string(kMaxBands) + " band objects is expected");
    }
    for (std::size_t k = 0; k < bands->size(); ++k) bands_.push_back(read_band((*bands)[k], k));
    channels_ = ports.output = ports.input;
  }

  void configure(double sample_rate, int period) override {
    Effect::configure(sample_rate, period);
    for (std::size_t k = 0; k < bands_.size(); ++k) check_freq(name(k, "freq"), bands_[k].freq);
  }

  void setup(Plan& plan, const NodeIo& io) override {
    auto& d = plan.data<EqKind>();
    base_ = static_cast<std::uint32_t>(d.params.size());
    d.params.resize(base_ + bands_.size());
    const auto n = static_cast<std::uint32_t>(bands_.size());
    for (int c = 0; c < channels_; ++c) {
      d.jobs.push_back({io.in[c], io.out[c], d.states, base_, n});
      d.states += 2 * n;
    }
    for (std::size_t k = 0; k < bands_.size(); ++k) write(k, d, false);
  }

  /// band.K.field, checked against the table's band.K.field.
  int check(std::string_view param, double value) const override {
    const auto bad = [&] {
      return ParamError(std::string(param),
                        "unknown parameter of eq (band.K.freq, band.K.gain_db or band.K.q)");
    };
    if (!param.starts_with("band.")) throw bad();
    const std::string_view rest = param.substr(5);
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos) throw bad();
    std::size_t k = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, k);
    if (ec != std::errc() || end != rest.data() + dot) throw bad();
    if (k >= bands_.size()) {
      throw ParamError(std::string(param),
                       "there are only " + std::to_string(bands_.size()) + " bands");
    }
    const std::string_view field = rest.substr(dot + 1);
    for (int f = kFreq; f <= kQ; ++f) {
      if (kParams[f].name.substr(7) != field) continue;
      check_range(param, value, kParams[f].lo, kParams[f].hi);
      if (f == kFreq) check_freq(std::string(param), value);
      return static_cast<int>(k) * kFields + (f - kFreq);
    }
    throw bad();
  }

  void apply(int id, double value, Plan& plan) override {
    BandSpec& b = bands_[id / kFields];
    (id % kFields == 0 ? b.freq : id % kFields == 1 ? b.gain_db : b.q) = value;
    write(id / kFields, plan.data<EqKind>(), true);
  }

 private:
  static std::string name(std::size_t k, const char* field) {
    return "band." + std::to_string(k) + "." + field;
  }

  BandSpec read_band(const Json& j, std::size_t k) {
    if (!j.is_object()) throw ParamError("band." + std::to_string(k), "an object is expected");
    BandSpec b;
    for (const auto& [key, v] : j.items()) {
      const std::string field = name(k, key.c_str());
      int f = kType;
      while (f <= kQ && kParams[f].name.substr(7) != key) ++f;
      if (f > kQ) throw ParamError(field, "unknown field");
      if (f == kType) {
        if (!v.is_string()) throw ParamError(field, "a string is expected");
        check_choice(kParams[kType], field, v.get<std::string>());
        b.type = band_type(v.get<std::string>());
        continue;
      }
      if (!v.is_number()) throw ParamError(field, "a number is expected");
      const double x = check_range(field, v.get<double>(), kParams[f].lo, kParams[f].hi);
      (f == kFreq ? b.freq : f == kGain ? b.gain_db : b.q) = x;
    }
    if (!j.contains("freq")) throw ParamError(name(k, "freq"), "missing");
    return b;
  }

  void check_freq(const std::string& param, double f) const {
    if (!(f > 0) || f >= sample_rate_ / 2) {
      throw ParamError(param, number_text(f) + " Hz is not below Nyquist (" +
                                  number_text(sample_rate_ / 2) + " Hz at a sample rate of " +
                                  number_text(sample_rate_) + " Hz)");
    }
  }

  void write(std::size_t k, EqKind::Data& d, bool ramp) const {
    dsp::EqBand& band = d.params[base_ + k];
    band.to = design(bands_[k], sample_rate_);
    if (!ramp) band.from = band.to;
    band.ramping = ramp;
    d.touch(ramp);
  }

  std::vector<BandSpec> bands_;
  int channels_ = 0;
  std::uint32_t base_ = 0;
};

}  // namespace

const EffectDescriptor kEq{"eq", "cascade of RBJ biquads, the same bands on every channel", kParams,
                           construct<Eq>};

}  // namespace sigpu::audio::effects
