// router: output channel o is input channel map[o] (any permutation, duplication or
// selection). Routing between nodes needs no router (ports name channels directly); this is
// for graphs that want the reordering as a node of its own.
#include "audio/effects/mix/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

constexpr ParamSpec kParams[] = {
    {"map",
     ParamType::list,
     0,
     0,
     0,
     "",
     ParamUpdate::fixed,
     "input channel of each output channel",
     {},
     true},
};

class Router : public MatrixEffect {
 public:
  std::unique_ptr<Effect> clone() const override { return std::make_unique<Router>(*this); }
  void parse(ParamReader& p, Ports& ports) override {
    const Json* map = p.raw("map");
    if (!map || !map->is_array() || map->empty() || map->size() > 65536) {
      throw ParamError("map", "an array of input channel numbers (one per output) is expected");
    }
    outputs_ = ports.output = static_cast<int>(map->size());
    for (int o = 0; o < outputs_; ++o) {
      const Json& v = (*map)[o];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
          v.get<std::int64_t>() >= ports.input) {
        throw ParamError(
            "map[" + std::to_string(o) + "]",
            "must be an input channel number in [0, " + std::to_string(ports.input - 1) + "]");
      }
      entries_.push_back({o, static_cast<int>(v.get<std::int64_t>()), 1});
    }
  }
  void apply(int, double, Plan&) override {}
};

}  // namespace

const EffectDescriptor kRouter{"router", "output channel o is input channel map[o]", kParams,
                               construct<Router>};

}  // namespace sigpu::audio::effects
