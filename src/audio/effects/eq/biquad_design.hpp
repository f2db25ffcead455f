// RBJ "Audio EQ Cookbook" (Robert Bristow-Johnson) biquad coefficients, in float64.
#pragma once

#include <string_view>

#include "audio/effects/eq/eq.hpp"

namespace sigpu::audio::effects {

enum class BandType { peak, lowshelf, highshelf, lowpass, highpass, bandpass, notch };

struct BandSpec {
  BandType type = BandType::peak;
  double freq = 1000, gain_db = 0, q = 0.7071067811865476;
};

/// Throws Error for an unknown name.
BandType band_type(std::string_view name);
dsp::BiquadCoefs design(const BandSpec& band, double sample_rate);

}  // namespace sigpu::audio::effects
