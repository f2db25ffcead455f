// Helpers for the audio tests: signals as planar float channels and a whole-signal run of a
// graph through an Engine, period by period.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <sigpu/audio.hpp>

#include "support/signals.hpp"

namespace sigpu::test::audio {

using Channels = std::vector<std::vector<float>>;

/// The music-like test signal (harmonic notes, envelopes, noise bursts; about -6 dBFS).
inline Channels music(int channels, std::size_t frames, std::uint64_t seed = 1) {
  Channels out(channels);
  for (int c0 = 0; c0 < channels; c0 += 8) {
    const int n = std::min(8, channels - c0);
    const auto s = make_signal(Signal::music, n, 24, frames, seed + c0);
    for (int c = 0; c < n; ++c) {
      out[c0 + c].resize(frames);
      for (std::size_t i = 0; i < frames; ++i) out[c0 + c][i] = float(s[i * n + c]) / 8388608.0f;
    }
  }
  return out;
}

inline Channels impulses(int channels, std::size_t frames, std::size_t every = 4801) {
  Channels out(channels, std::vector<float>(frames, 0.0f));
  for (int c = 0; c < channels; ++c) {
    for (std::size_t i = c % 7; i < frames; i += every) out[c][i] = 0.9f;
  }
  return out;
}

/// Runs the whole signal through a fresh engine; the last partial period is zero-padded.
inline Channels run(const sigpu::audio::Graph& g, const Channels& in,
                    const sigpu::audio::EngineOptions& o) {
  sigpu::audio::Engine e(g, o);
  e.setup();
  const std::size_t frames = in.empty() ? 0 : in[0].size();
  const std::size_t P = o.period;
  Channels out(e.outputs(), std::vector<float>(frames));
  std::vector<std::vector<float>> ib(e.inputs(), std::vector<float>(P)),
      ob(e.outputs(), std::vector<float>(P));
  std::vector<const float*> ip;
  std::vector<float*> op;
  for (auto& b : ib) ip.push_back(b.data());
  for (auto& b : ob) op.push_back(b.data());
  for (std::size_t at = 0; at < frames; at += P) {
    const std::size_t n = std::min(P, frames - at);
    for (int c = 0; c < e.inputs(); ++c) {
      std::fill(ib[c].begin(), ib[c].end(), 0.0f);
      std::copy_n(in[c].begin() + at, n, ib[c].begin());
    }
    e.process(ip.data(), op.data());
    for (int c = 0; c < e.outputs(); ++c) std::copy_n(ob[c].begin(), n, out[c].begin() + at);
  }
  return out;
}

/// The worst max-abs difference over all channels, in dBFS.
inline double worst_dbfs(const Channels& a, const Channels& b) {
  double worst = -400;
  for (std::size_t c = 0; c < a.size(); ++c) {
    worst = std::max(worst, sigpu::audio::compare(a[c], b[c]).max_abs_dbfs);
  }
  return worst;
}

inline std::string source_path(const std::string& rel) {
  return std::string(SIGPU_SOURCE_DIR) + "/" + rel;
}

/// The message of the sigpu::Error that f throws; empty when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sigpu::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace sigpu::test::audio
