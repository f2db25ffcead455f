// libFuzzer target: a .nam model file (JSON) as untrusted bytes. Bad input must give
// sigpu::Error naming the field, never a crash, a hang or a huge allocation. Models that load
// and are cheap enough are also run for a few periods on the CPU reference.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <sigpu/nam.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sigpu::nam::Model m;
  try {
    m = sigpu::nam::parse(text, "fuzz.nam");
  } catch (const sigpu::Error&) {
    return 0;
  }
  const bool container = m.architecture == sigpu::nam::Architecture::slimmable_container;
  if (m.weights.empty() != container || (container && m.sizes.empty())) {
    std::fprintf(stderr, "fuzz invariant broken: a loaded model is inconsistent\n");
    std::abort();
  }
  // Running costs about (pre-warm + frames) x weights multiply-adds: keep an input well under
  // 10 ms.
  // (Every size of a slimmable model runs.)
  double weights = static_cast<double>(m.weights.size());
  for (const auto& s : m.sizes) weights += static_cast<double>(s.model->weights.size());
  const double cost = (static_cast<double>(m.prewarm_samples()) + 256) * weights;
  if (cost > 2e6 || m.receptive_field() > 4096) return 0;
  try {
    sigpu::nam::Processor p(m, {.sample_rate = m.sample_rate, .max_frames = 64});
    std::vector<float> x(256), y(256);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 37) * 0.02f - 0.3f;
    p.process(x.data(), y.data(), 64);
    p.process(x.data() + 64, y.data() + 64, 192);  // larger than max_frames: split inside
  } catch (const sigpu::Error&) {
  }
  return 0;
}
