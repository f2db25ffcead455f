// A deterministic, music-like signal for `sigpu demo`: plucked-string arpeggios and a lead
// over a pad, a bass line and drums, panned and sent through a small reverb. Music has the
// tonal and transient structure FLAC's predictors are built for; noise or sine sweeps would
// make the compression and speed figures meaningless.
#pragma once

#include <cstdint>
#include <vector>

namespace sigpu::cli {

struct DemoSignal {
  std::uint32_t sample_rate = 44100;
  std::uint32_t channels = 2;
  std::vector<float> samples;  ///< interleaved L R, peak at -1 dBFS
  std::uint64_t frames() const { return samples.size() / channels; }
};

/// The same seed gives the same signal in every run of one build.
DemoSignal synthesize_demo(double seconds, std::uint64_t seed, std::uint32_t sample_rate = 44100);

/// Rounds to `bits`-bit integers with TPDF dither (seeded) and clamps to the range.
std::vector<std::int32_t> quantize(const std::vector<float>& x, unsigned bits, std::uint64_t seed);

}  // namespace sigpu::cli
