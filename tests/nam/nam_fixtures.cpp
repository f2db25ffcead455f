#include "nam/nam_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>
#endif

namespace sigpu::test {

std::filesystem::path fixtures_dir() {
  if (const char* d = std::getenv("SIGPU_FIXTURES_DIR"); d && *d) return d;
  return SIGPU_FIXTURES_DIR;
}

std::filesystem::path nam_fixture(const std::string& name) {
  return fixtures_dir() / "nam" / name;
}

bool have_nam_fixtures() {
  return std::filesystem::is_directory(fixtures_dir() / "nam");
}

std::vector<std::string> nam_model_fixtures() {
  return {"wavenet.nam", "lstm.nam", "wavenet_a1_standard.nam"};
}

std::vector<float> nam_di_input() {
#ifdef SIGPU_HAVE_SNDFILE
  SF_INFO info{};
  SNDFILE* f = sf_open(nam_fixture("input.wav").string().c_str(), SFM_READ, &info);
  if (!f || info.channels != 1) {
    if (f) sf_close(f);
    return {};
  }
  std::vector<float> x(static_cast<std::size_t>(info.frames));
  x.resize(static_cast<std::size_t>(sf_readf_float(f, x.data(), info.frames)));
  sf_close(f);
  return x;
#else
  return {};
#endif
}

std::vector<float> nam_music_input() {
  constexpr int n = 12000;
  constexpr int periods[] = {218, 173, 146, 109};  // about 220, 277, 329 and 440 Hz
  std::vector<float> y(n, 0.0f);
  std::uint32_t seed = 12345;
  for (int s = 0; s < 4; ++s) {
    std::vector<float> string(static_cast<std::size_t>(periods[s]));
    for (float& v : string) {
      seed = seed * 1664525u + 1013904223u;
      v = static_cast<float>(static_cast<std::int32_t>(seed >> 8) - (1 << 23)) / (1 << 23);
    }
    for (int t = s * 1920, i = 0; t < n; ++t, ++i) {
      const std::size_t j = static_cast<std::size_t>(i % periods[s]);
      const std::size_t k = static_cast<std::size_t>((i + 1) % periods[s]);
      y[static_cast<std::size_t>(t)] += 0.2f * string[j];
      string[j] = 0.498f * (string[j] + string[k]);
    }
  }
  return y;
}

double gpu_tolerance(const std::vector<float>& want) {
  float peak = 1.0f;
  for (float v : want) peak = std::max(peak, std::abs(v));
  return 1e-5 * peak;
}

std::filesystem::path nam_a2_fixture(const std::string& name) {
  return fixtures_dir() / "nam-a2" / name;
}

double max_error_dbfs(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
  return m > 0 ? 20 * std::log10(m) : -400;
}

std::vector<float> nam_cpu_run(const nam::Model& m, const std::vector<float>& x, int period,
                               long switch_at, double size) {
  nam::Processor p(m, {.sample_rate = m.sample_rate, .max_frames = period});
  std::vector<float> y(x.size());
  for (std::size_t at = 0; at < x.size(); at += period) {
    if (static_cast<long>(at) == switch_at) p.set_size(size);
    p.process(x.data() + at, y.data() + at,
              static_cast<int>(std::min<std::size_t>(period, x.size() - at)));
  }
  return y;
}

std::vector<std::vector<float>> nam_gpu_run(const std::vector<const nam::Model*>& models,
                                            const std::vector<std::vector<float>>& in, int period,
                                            bool shared_weights, long switch_at,
                                            const std::vector<double>& sizes) {
  nam::CudaBatch batch(models, {.sample_rate = models[0]->sample_rate,
                                .max_frames = period,
                                .shared_weights = shared_weights});
  const std::size_t n = in[0].size();
  std::vector<std::vector<float>> out(in.size(), std::vector<float>(n));
  for (std::size_t at = 0; at < n; at += period) {
    if (static_cast<long>(at) == switch_at)
      for (std::size_t i = 0; i < sizes.size(); ++i) batch.set_size(static_cast<int>(i), sizes[i]);
    std::vector<const float*> ip;
    std::vector<float*> op;
    for (std::size_t i = 0; i < in.size(); ++i) {
      ip.push_back(in[i].data() + at);
      op.push_back(out[i].data() + at);
    }
    batch.process_host(ip.data(), op.data(),
                       static_cast<int>(std::min<std::size_t>(period, n - at)));
  }
  return out;
}

}  // namespace sigpu::test
