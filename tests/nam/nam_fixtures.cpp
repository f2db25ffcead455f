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

}  // namespace sigpu::test
