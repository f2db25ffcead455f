#include <utility>

#include "audio/effects/effects.hpp"

namespace sigpu::audio {
namespace {

using Factory = std::unique_ptr<Effect> (*)();
constexpr std::pair<std::string_view, Factory> kTypes[] = {
    {"gain", effects::make_gain},
    {"pan", effects::make_pan},
    {"mixer", effects::make_mixer},
    {"router", effects::make_router},
    {"eq", effects::make_eq},
    {"gate", effects::make_gate},
    {"compressor", effects::make_compressor},
    {"delay", effects::make_delay},
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
    {"convolution", effects::make_convolution},
#endif
#ifdef SIGPU_HAVE_AUDIO_NAM
    {"nam", effects::make_nam},
#endif
};

}  // namespace

std::unique_ptr<Effect> make_effect(std::string_view type) {
  for (const auto& [name, factory] : kTypes) {
    if (name == type) return factory();
  }
  return nullptr;
}

std::string effect_types() {
  std::string s;
  for (const auto& t : kTypes) s += (s.empty() ? "" : ", ") + std::string(t.first);
  return s;
}

}  // namespace sigpu::audio
