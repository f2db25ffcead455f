// nam: a Neural Amp Modeler model (.nam file, through the nam module) on every channel, each
// channel its own instance (its own history), with an input gain before the model (how hard
// the "amp" is driven) and an output gain after it. Models are not resampled: a model trained
// at another rate than the graph's is refused.
#ifdef SIGPU_HAVE_AUDIO_NAM
#include "audio/effect.hpp"
#include "audio/effects/registry.hpp"

namespace sigpu::audio::effects {
namespace {

using enum ParamType;
using enum ParamUpdate;

constexpr ParamSpec kParams[] = {
    {"model", file, 0, 0, 0, "", fixed, ".nam model file", {}, true},
    {"input_gain_db", number, 0, -60, 60, "dB", fixed, "drive into the model"},
    {"output_gain_db", number, 0, -60, 60, "dB", fixed, "level after the model"},
    {"size", number, 1, 0, 1, "", smoothed,
     "a slimmable model's size (a change crossfades, on the CPU and the GPU)"},
};

class Nam : public EffectBase<Nam> {
 public:
  Kind kind() const override { return kind_of<NamKind>(); }

  void parse(ParamReader& p, Ports& ports) override {
    const std::string model = p.file(kParams[0]);
    input_gain_ = static_cast<float>(db_to_gain(p.number(kParams[1])));
    output_gain_ = static_cast<float>(db_to_gain(p.number(kParams[2])));
    size_ = p.number(kParams[3]);
    try {
      model_ = std::make_shared<const nam::Model>(nam::load(p.path(model)));
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
    auto& data = plan.data<NamKind>();
    slot_ = static_cast<std::uint32_t>(data.sizes.size());
    data.sizes.push_back(size_);
    for (std::size_t c = 0; c < io.in.size(); ++c)
      data.jobs.push_back({spec, io.in[c], io.out[c], slot_});
  }
  void apply(int, double value, Plan& plan) override { plan.data<NamKind>().sizes[slot_] = value; }

 private:
  std::shared_ptr<const nam::Model> model_;  // shared by clones: a model is read once
  float input_gain_ = 1, output_gain_ = 1;
  double size_ = 1;
  std::uint32_t slot_ = 0;  ///< this node's entry in NamKind::Data::sizes
};

}  // namespace

const EffectDescriptor kNam{"nam", "a Neural Amp Modeler model (.nam) on every channel", kParams,
                            construct<Nam>};

}  // namespace sigpu::audio::effects
#endif
