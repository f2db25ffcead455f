// The real-time benchmark: back-to-back periods through an Engine, each timed against the
// period's duration.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#ifdef SIGPU_HAVE_CUDA
#include "core/cuda/buffer.hpp"
#endif

#include <sigpu/audio_bench.hpp>

namespace sigpu::audio {
namespace {

/// Floats for process_planar(): pinned host memory where the engine runs on CUDA (its kernels
/// read and write it directly), ordinary memory otherwise.
class IoMemory {
 public:
  IoMemory(std::size_t n, [[maybe_unused]] bool pinned) {
#ifdef SIGPU_HAVE_CUDA
    if (pinned) {
      pinned_ = cuda::Buffer<float, cuda::PinnedMemory>(n);
      data_ = pinned_.get();
      return;
    }
#endif
    plain_.assign(n, 0.0f);
    data_ = plain_.data();
  }
  float* data() {
    return data_;
  }

 private:
  std::vector<float> plain_;
#ifdef SIGPU_HAVE_CUDA
  cuda::Buffer<float, cuda::PinnedMemory> pinned_;
#endif
  float* data_ = nullptr;
};

/// Band-limited noise bursts at music-like levels, `blocks` periods of `channels` channels,
/// planar per period: channel c of period b at (b * channels + c) * frames.
void test_signal(float* s, int channels, int frames, int blocks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  for (int c = 0; c < channels; ++c) {
    float lp = 0;
    for (int i = 0; i < frames * blocks; ++i) {
      lp = 0.9f * lp + 0.1f * noise(rng);
      const float env = 0.5f + 0.5f * std::sin(6.2831853f * (i + 997 * c) / 24000.0f);
      s[(std::size_t(i / frames) * channels + c) * frames + i % frames] = 3.0f * lp * env;
    }
  }
}

}  // namespace

BenchResult time_periods(Engine& engine, int count, std::uint64_t periods,
                         std::uint64_t stop_after_misses, bool planar,
                         std::vector<std::uint64_t>* late) {
  const int frames = engine.period(), inputs = engine.inputs(), outputs = engine.outputs();
  // Distinct input periods, cycled: 64 of them, fewer for wide graphs (16M samples at most).
  const int blocks = static_cast<int>(
      std::clamp<std::int64_t>((std::int64_t{1} << 24) / (std::int64_t(inputs) * frames), 2, 64));
  const bool pinned = planar && engine.backend() == Backend::cuda;
  IoMemory signal(std::size_t(inputs) * frames * blocks, pinned),
      out(std::size_t(outputs) * frames, pinned);
  test_signal(signal.data(), inputs, frames, blocks, 1);
  std::vector<const float*> ins(inputs);
  std::vector<float*> outs(outputs);
  for (int c = 0; c < outputs; ++c) outs[c] = out.data() + std::size_t(c) * frames;

  BenchResult r;
  r.backend = engine.backend();
  r.frames = frames;
  r.N = count;
  r.deadline_us = frames / engine.sample_rate() * 1e6;
  std::vector<float> times;
  times.reserve(periods);
  if (late) {
    late->clear();
    late->reserve(kMaxLateRecorded);  // nothing allocates between the timed calls
  }
  const std::uint64_t warmup = std::min(kWarmupPeriods, periods);
  for (std::uint64_t p = 0; p < periods + warmup && r.misses <= stop_after_misses; ++p) {
    const float* block = signal.data() + (p % blocks) * std::size_t(inputs) * frames;
    if (!planar) {
      for (int c = 0; c < inputs; ++c) ins[c] = block + std::size_t(c) * frames;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (planar) {
      engine.process_planar(block, out.data());
    } else {
      engine.process(ins.data(), outs.data());
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (p >= warmup) {
      const float t = std::chrono::duration<float, std::micro>(t1 - t0).count();
      times.push_back(t);
      if (t > r.deadline_us) {
        ++r.misses;
        if (late && late->size() < kMaxLateRecorded) late->push_back(p - warmup);
      }
    }
  }
  r.periods = times.size();
  if (times.empty()) return r;
  double sum = 0;
  for (float t : times) sum += t;
  std::sort(times.begin(), times.end());
  const auto at = [&](double q) {
    return double(times[std::min<std::size_t>(times.size() - 1, std::size_t(q * times.size()))]);
  };
  r.mean_us = sum / times.size();
  r.p99_us = at(0.99);
  r.p999_us = at(0.999);
  r.p9999_us = at(0.9999);
  r.max_us = times.back();
  return r;
}

BenchResult bench_console(int N, Backend backend, int frames, std::uint64_t periods,
                          double sample_rate) {
  Engine engine(console_graph(N),
                {.backend = backend, .period = frames, .sample_rate = sample_rate});
  engine.setup();
  return time_periods(engine, N, periods);
}

}  // namespace sigpu::audio
