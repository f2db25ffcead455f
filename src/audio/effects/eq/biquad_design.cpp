#include "audio/effects/eq/biquad_design.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include <sigpu/core.hpp>

namespace sigpu::audio::effects {

BandType band_type(std::string_view name) {
  if (name == "peak") return BandType::peak;
  if (name == "lowshelf") return BandType::lowshelf;
  if (name == "highshelf") return BandType::highshelf;
  if (name == "lowpass") return BandType::lowpass;
  if (name == "highpass") return BandType::highpass;
  if (name == "bandpass") return BandType::bandpass;
  if (name == "notch") return BandType::notch;
  throw Error("'" + std::string(name) +
              "' is not one of peak, lowshelf, highshelf, lowpass, highpass, bandpass, notch");
}

dsp::BiquadCoefs design(const BandSpec& band, double sample_rate) {
  const double A = std::pow(10.0, band.gain_db / 40.0);
  const double w0 = 2.0 * std::numbers::pi * band.freq / sample_rate;
  const double cw = std::cos(w0), alpha = std::sin(w0) / (2.0 * band.q);
  const double sa = 2.0 * std::sqrt(A) * alpha;
  double b0 = 1, b1 = 0, b2 = 0, a0 = 1, a1 = 0, a2 = 0;
  switch (band.type) {
    case BandType::peak:
      b0 = 1 + alpha * A, b1 = -2 * cw, b2 = 1 - alpha * A;
      a0 = 1 + alpha / A, a1 = -2 * cw, a2 = 1 - alpha / A;
      break;
    case BandType::lowshelf:
      b0 = A * ((A + 1) - (A - 1) * cw + sa);
      b1 = 2 * A * ((A - 1) - (A + 1) * cw);
      b2 = A * ((A + 1) - (A - 1) * cw - sa);
      a0 = (A + 1) + (A - 1) * cw + sa;
      a1 = -2 * ((A - 1) + (A + 1) * cw);
      a2 = (A + 1) + (A - 1) * cw - sa;
      break;
    case BandType::highshelf:
      b0 = A * ((A + 1) + (A - 1) * cw + sa);
      b1 = -2 * A * ((A - 1) + (A + 1) * cw);
      b2 = A * ((A + 1) + (A - 1) * cw - sa);
      a0 = (A + 1) - (A - 1) * cw + sa;
      a1 = 2 * ((A - 1) - (A + 1) * cw);
      a2 = (A + 1) - (A - 1) * cw - sa;
      break;
    case BandType::lowpass:
      b0 = (1 - cw) / 2, b1 = 1 - cw, b2 = (1 - cw) / 2;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case BandType::highpass:
      b0 = (1 + cw) / 2, b1 = -(1 + cw), b2 = (1 + cw) / 2;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case BandType::bandpass:  // constant 0 dB peak gain
      b0 = alpha, b1 = 0, b2 = -alpha;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
    case BandType::notch:
      b0 = 1, b1 = -2 * cw, b2 = 1;
      a0 = 1 + alpha, a1 = -2 * cw, a2 = 1 - alpha;
      break;
  }
  return {b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0};
}

}  // namespace sigpu::audio::effects
