// nam: a Neural Amp Modeler model (.nam file, through the nam module) on every channel, each
// channel its own instance (its own history), with an input gain before the model (how hard
// the "amp" is driven) and an output gain after it. Models are not resampled: a model trained
// at another rate than the graph's is refused.
#ifdef SIGPU_HAVE_AUDIO_NAM
#include "audio/effects/effects.hpp"
#include "audio/effects/nam_node.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr double kMinDb = -60, kMaxDb = 60;

class Nam : public EffectBase<Nam> {
 public:
  Kind kind() const override { return Kind::nam; }

  void parse(ParamReader& p, Ports& ports) override {
    const Json* model = p.raw("model");
    if (!model || !model->is_string()) throw ParamError("model", "the .nam model file is missing");
    input_gain_ = static_cast<float>(db_to_gain(p.number("input_gain_db", 0, kMinDb, kMaxDb)));
    output_gain_ = static_cast<float>(db_to_gain(p.number("output_gain_db", 0, kMinDb, kMaxDb)));
    size_ = p.number("size", 1, 0, 1);
    try {
      model_ = std::make_shared<const nam::Model>(nam::load(p.path(model->get<std::string>())));
    } catch (const UnsupportedError& e) {  // the loader names the file and the field
      throw ParamError::unsupported("model", e.what());
    } catch (const Error& e) {
      throw ParamError("model", e.what());
    }
    ports.output = ports.input;
  }

  void configure(double sample_rate, int period) override {
    Effect::configure(sample_rate, period);
    if (std::abs(model_->sample_rate - sample_rate) > 1e-6 * model_->sample_rate) {
      throw ParamError("model", "'" + model_->source + "' was trained at " +
                                    number_text(model_->sample_rate) + " Hz" +
                                    (model_->sample_rate_in_file ? "" : " (assumed: not in file)") +
                                    " but the graph runs at " + number_text(sample_rate) +
                                    " Hz; NAM models are not resampled");
    }
  }

  void setup(Plan& plan, const NodeIo& io) override {
    auto spec = std::make_shared<const NamSpec>(
        NamSpec{model_, sample_rate_, input_gain_, output_gain_, size_});
    slot_ = static_cast<std::uint32_t>(plan.params.nam_size.size());
    plan.params.nam_size.push_back(size_);
    for (std::size_t c = 0; c < io.in.size(); ++c)
      plan.nam.push_back({spec, io.in[c], io.out[c], slot_});
  }
  int check(std::string_view param, double value) const override {
    if (param != "size")
      throw ParamError(std::string(param), "nam's only runtime parameter is size");
    check_range(param, value, 0, 1);
    return 0;
  }
  void apply(int, double value, Params& params) override { params.nam_size[slot_] = value; }

 private:
  std::shared_ptr<const nam::Model> model_;  // shared by clones: a model is read once
  float input_gain_ = 1, output_gain_ = 1;
  double size_ = 1;
  std::uint32_t slot_ = 0;
};

}  // namespace

std::unique_ptr<Effect> make_nam() {
  return std::make_unique<Nam>();
}

}  // namespace sigpu::audio::effects
#endif
