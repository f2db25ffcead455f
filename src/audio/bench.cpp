// The real-time benchmark: back-to-back periods through an Engine, each timed against the
// period's duration.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include <sigpu/audio.hpp>

namespace sigpu::audio {
namespace {

/// Band-limited noise bursts at music-like levels, a few seconds long, per channel.
std::vector<float> test_signal(int channels, int frames, std::uint64_t seed) {
  std::vector<float> s(std::size_t(channels) * frames);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  for (int c = 0; c < channels; ++c) {
    float lp = 0;
    for (int i = 0; i < frames; ++i) {
      lp = 0.9f * lp + 0.1f * noise(rng);
      const float env = 0.5f + 0.5f * std::sin(6.2831853f * (i + 997 * c) / 24000.0f);
      s[std::size_t(c) * frames + i] = 3.0f * lp * env;
    }
  }
  return s;
}

}  // namespace

BenchResult bench_console(int N, Backend backend, int frames, std::uint64_t periods,
                          double sample_rate) {
  Engine engine(console_graph(N),
                {.backend = backend, .period = frames, .sample_rate = sample_rate});
  engine.setup();
  constexpr int kBlocks = 64;  // distinct input periods, cycled
  const auto signal = test_signal(N, frames * kBlocks, 1);
  std::vector<float> in(std::size_t(N) * frames), out(std::size_t(engine.outputs()) * frames);
  std::vector<const float*> ins(N);
  std::vector<float*> outs(engine.outputs());
  for (int c = 0; c < engine.outputs(); ++c) outs[c] = out.data() + std::size_t(c) * frames;

  BenchResult r;
  r.backend = engine.backend();
  r.frames = frames;
  r.N = N;
  r.periods = periods;
  r.deadline_us = frames / sample_rate * 1e6;
  std::vector<float> times(periods);
  const std::uint64_t warmup = std::min<std::uint64_t>(200, periods);
  for (std::uint64_t p = 0; p < periods + warmup; ++p) {
    const std::size_t block = p % kBlocks;
    for (int c = 0; c < N; ++c) {
      ins[c] = signal.data() + std::size_t(c) * frames * kBlocks + block * frames;
    }
    const auto t0 = std::chrono::steady_clock::now();
    engine.process(ins.data(), outs.data());
    const auto t1 = std::chrono::steady_clock::now();
    if (p >= warmup) {
      times[p - warmup] = std::chrono::duration<float, std::micro>(t1 - t0).count();
    }
  }
  double sum = 0;
  for (float t : times) {
    sum += t;
    if (t > r.deadline_us) ++r.misses;
  }
  std::sort(times.begin(), times.end());
  const auto at = [&](double q) {
    return double(times[std::min<std::size_t>(times.size() - 1, std::size_t(q * times.size()))]);
  };
  if (!times.empty()) {
    r.mean_us = sum / times.size();
    r.p99_us = at(0.99);
    r.p999_us = at(0.999);
    r.max_us = times.back();
  }
  return r;
}

}  // namespace sigpu::audio
