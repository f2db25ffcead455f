#include "audio/effects/registry.hpp"

#include "audio/effect.hpp"

namespace sigpu::audio {

const EffectDescriptor* find_effect(std::string_view type) {
  for (const EffectDescriptor* d : kEffects) {
    if (d->type == type) return d;
  }
  return nullptr;
}

std::unique_ptr<Effect> make_effect(std::string_view type) {
  const EffectDescriptor* d = find_effect(type);
  if (!d) return nullptr;
  auto e = d->make();
  e->descriptor_ = d;
  return e;
}

std::vector<EffectInfo> describe_effects() {
  static constexpr const char* kTypes[] = {"number", "integer", "choice", "file", "list"};
  static constexpr const char* kUpdates[] = {"fixed", "ramped", "smoothed"};
  std::vector<EffectInfo> out;
  for (const EffectDescriptor* d : kEffects) {
    EffectInfo e{std::string(d->type), std::string(d->summary), d->sidechain, {}};
    for (const ParamSpec& p : d->params) {
      e.params.push_back({std::string(p.name), kTypes[static_cast<int>(p.type)], p.fallback, p.lo,
                          p.hi, std::string(p.unit), kUpdates[static_cast<int>(p.update)],
                          std::string(p.help), std::string(p.choices), p.required});
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string effect_types() {
  std::string s;
  for (const EffectDescriptor* d : kEffects) s += (s.empty() ? "" : ", ") + std::string(d->type);
  return s;
}

}  // namespace sigpu::audio
