#include "nam/nam_fixtures.hpp"

#include <algorithm>
#include <cmath>
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

double max_error_dbfs(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
  return m > 0 ? 20 * std::log10(m) : -400;
}

}  // namespace sigpu::test
