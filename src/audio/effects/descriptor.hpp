// What an effect kind declares once: its parameters (name, type, range, unit, default, how a
// runtime change takes effect) and how to make one. Graph-file validation reads parameters
// through this table (ParamReader), Effect::check validates runtime updates against it, and
// the public describe_effects() (the CLI's `sigpu audio effects`, docs/audio.md, the control
// surface) shows it.
#pragma once

#include <memory>
#include <span>
#include <string_view>

namespace sigpu::audio {

class Effect;

enum class ParamType {
  number,   ///< a float64 in [lo, hi]
  integer,  ///< an integer in [lo, hi] or an expression over the graph's variables ("N/2")
  choice,   ///< one of `choices` (comma separated)
  file,     ///< a file name, relative to the graph file's folder
  list,     ///< an array (EQ bands, a mix matrix, a channel map); `help` says of what
};

/// How a runtime update (Engine::update) of the parameter takes effect at the next period.
enum class ParamUpdate {
  fixed,     ///< graph file only: a change needs a new plan (structural edit)
  ramped,    ///< ramped linearly over one period (gains, coefficients, delay taps)
  smoothed,  ///< taken at once; the effect's own envelope smooths its action
};

struct ParamSpec {
  std::string_view name;  ///< "band.K.freq": K is the band's index (from 0)
  ParamType type = ParamType::number;
  double fallback = 0, lo = 0, hi = 0;  ///< number and integer only
  std::string_view unit;                ///< "dB", "ms", "Hz", "" (a plain ratio)
  ParamUpdate update = ParamUpdate::fixed;
  std::string_view help;
  std::string_view choices;  ///< choice only
  bool required = false;     ///< no fallback: the graph file must give it
};

struct EffectDescriptor {
  std::string_view type;     ///< the graph file's "type"
  std::string_view summary;  ///< one line
  std::span<const ParamSpec> params;
  std::unique_ptr<Effect> (*make)();
  bool sidechain = false;  ///< takes a side-chain input
};

/// EffectDescriptor::make for the effect class T.
template <typename T>
std::unique_ptr<Effect> construct() {
  return std::make_unique<T>();
}

}  // namespace sigpu::audio
