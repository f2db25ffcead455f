// router: output channel o is input channel map[o] (any permutation, duplication or
// selection). Routing between nodes needs no router (ports name channels directly); this is
// for graphs that want the reordering as a node of its own.
#include "audio/effects/effects.hpp"
#include "audio/effects/matrix.hpp"

namespace sigpu::audio::effects {
namespace {

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
  int check(std::string_view param, double) const override {
    throw ParamError(std::string(param), "router has no runtime parameters");
  }
  void apply(int, double, Params&) override {}
};

}  // namespace

std::unique_ptr<Effect> make_router() {
  return std::make_unique<Router>();
}

}  // namespace sigpu::audio::effects
