// The evaluator: max absolute error and RMSD in dBFS, at the best time offset.
#include <algorithm>
#include <cmath>

#include <sigpu/audio.hpp>

namespace sigpu::audio {
namespace {

double dbfs(double v) {
  return v > 0 ? std::max(-400.0, 20.0 * std::log10(v)) : -400.0;
}

}  // namespace

Difference compare(std::span<const float> reference, std::span<const float> test, int max_offset) {
  if (max_offset < 0) throw Error("compare: max_offset must not be negative");
  Difference best;
  double best_rms = -1;
  const auto size = static_cast<std::ptrdiff_t>(reference.size());
  const auto tsize = static_cast<std::ptrdiff_t>(test.size());
  for (int off = -max_offset; off <= max_offset; ++off) {
    const std::ptrdiff_t begin = std::max<std::ptrdiff_t>(0, -off);
    const std::ptrdiff_t end = std::min(size, tsize - off);
    if (end <= begin) continue;
    double sum = 0, peak = 0;
    for (std::ptrdiff_t i = begin; i < end; ++i) {
      const double d = double(test[i + off]) - double(reference[i]);
      sum += d * d;
      peak = std::max(peak, std::abs(d));
    }
    const double rms = std::sqrt(sum / double(end - begin));
    if (best_rms < 0 || rms < best_rms) {
      best_rms = rms;
      best = {dbfs(peak), dbfs(rms), off, static_cast<std::size_t>(end - begin)};
    }
  }
  return best;
}

}  // namespace sigpu::audio
