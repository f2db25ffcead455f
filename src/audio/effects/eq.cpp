// eq: a cascade of RBJ biquads, the same bands on every channel. Runtime parameters are
// band.K.freq, band.K.gain_db and band.K.q (K from 0); a change is a one-period coefficient
// ramp (dsp/biquad.hpp).
#include <charconv>

#include "audio/effects/biquad_design.hpp"
#include "audio/effects/effects.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr int kMaxBands = 64;
constexpr double kMinQ = 0.025, kMaxQ = 100, kMaxGainDb = 48;

class Eq : public EffectBase<Eq> {
 public:
  Kind kind() const override { return Kind::eq; }

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
    base_ = static_cast<std::uint32_t>(plan.params.bands.size());
    plan.params.bands.resize(base_ + bands_.size());
    const auto n = static_cast<std::uint32_t>(bands_.size());
    for (int c = 0; c < channels_; ++c) {
      plan.eq.push_back({io.in[c], io.out[c], plan.eq_state, base_, n});
      plan.eq_state += 2 * n;
    }
    for (std::size_t k = 0; k < bands_.size(); ++k) write(k, plan.params, false);
  }

  int check(std::string_view param, double value) const override {
    // band.K.field
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
    int id = static_cast<int>(k) * 3;
    if (field == "freq") {
      check_range(param, value, 0, 1e6);
      check_freq(std::string(param), value);
    } else if (field == "gain_db") {
      check_range(param, value, -kMaxGainDb, kMaxGainDb);
      id += 1;
    } else if (field == "q") {
      check_range(param, value, kMinQ, kMaxQ);
      id += 2;
    } else {
      throw bad();
    }
    return id;
  }

  void apply(int id, double value, Params& params) override {
    BandSpec& b = bands_[id / 3];
    (id % 3 == 0 ? b.freq : id % 3 == 1 ? b.gain_db : b.q) = value;
    write(id / 3, params, true);
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
      if (key == "type") {
        if (!v.is_string()) throw ParamError(field, "a string is expected");
        try {
          b.type = band_type(v.get<std::string>());
        } catch (const Error& e) {
          throw ParamError(field, e.what());
        }
        continue;
      }
      if (key != "freq" && key != "gain_db" && key != "q") throw ParamError(field, "unknown field");
      if (!v.is_number()) throw ParamError(field, "a number is expected");
      const double x = v.get<double>();
      if (key == "freq") b.freq = check_range(field, x, 1e-3, 1e6);
      if (key == "gain_db") b.gain_db = check_range(field, x, -kMaxGainDb, kMaxGainDb);
      if (key == "q") b.q = check_range(field, x, kMinQ, kMaxQ);
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

  void write(std::size_t k, Params& params, bool ramp) const {
    dsp::EqBand& band = params.bands[base_ + k];
    band.to = design(bands_[k], sample_rate_);
    if (!ramp) band.from = band.to;
    band.ramping = ramp;
    params.touch(Kind::eq, ramp);
  }

  std::vector<BandSpec> bands_;
  int channels_ = 0;
  std::uint32_t base_ = 0;
};

}  // namespace

std::unique_ptr<Effect> make_eq() {
  return std::make_unique<Eq>();
}

}  // namespace sigpu::audio::effects
