#include "convolution/reference.hpp"

#include <algorithm>
#include <cmath>

#include "support/rng.hpp"
#include "support/signals.hpp"

namespace sigpu::test {

Channels make_input(Input kind, unsigned channels, std::size_t frames, std::uint64_t seed) {
  Channels out(channels, std::vector<float>(frames, 0.0f));
  switch (kind) {
    case Input::impulse:
      for (unsigned c = 0; c < channels; ++c)
        if (3 * c < frames) out[c][3 * c] = 1.0f;
      break;
    case Input::noise: {
      Rng rng{seed};
      for (auto& ch : out)
        for (auto& v : ch) v = static_cast<float>(0.5 * rng.symmetric());
      break;
    }
    case Input::music:  // the generator makes at most 8 channels: groups of 8, own seeds
      for (unsigned first = 0; first < channels; first += 8) {
        const unsigned n = std::min(8u, channels - first);
        const auto pcm = make_signal(Signal::music, n, 24, frames, seed + first);
        for (std::size_t t = 0; t < frames; ++t)
          for (unsigned c = 0; c < n; ++c)
            out[first + c][t] = static_cast<float>(pcm[t * n + c] / 8388608.0);
      }
      break;
  }
  return out;
}

std::vector<float> make_ir(std::size_t taps, std::uint64_t seed) {
  Rng rng{seed * 7919 + 17};
  std::vector<double> h(taps);
  double energy = 0;
  const double decay = 5.0 / static_cast<double>(taps);  // -43 dB at the end
  for (std::size_t k = 0; k < taps; ++k) {
    h[k] = rng.symmetric() * std::exp(-decay * static_cast<double>(k));
    energy += h[k] * h[k];
  }
  std::vector<float> out(taps);
  const double scale = energy > 0 ? 1.0 / std::sqrt(energy) : 1.0;
  for (std::size_t k = 0; k < taps; ++k) out[k] = static_cast<float>(h[k] * scale);
  return out;
}

convolution::Config mono_config(std::uint32_t partition, std::size_t taps) {
  return {.partition = partition,
          .inputs = 1,
          .outputs = 1,
          .irs = {make_ir(taps, taps)},
          .paths = {{0, 0, 0}}};
}

convolution::Config true_stereo_config(std::uint32_t partition, std::size_t taps) {
  convolution::Config c{
      .partition = partition, .inputs = 2, .outputs = 2, .wet = 0.7f, .dry = 0.3f};
  for (std::size_t i = 0; i < 4; ++i) c.irs.push_back(make_ir(taps - 37 * i, 10 + i));
  c.paths = {{0, 0, 0}, {0, 1, 1}, {1, 2, 0}, {1, 3, 1}};
  return c;
}

convolution::Config many_channels_config(std::uint32_t partition, std::uint32_t inputs,
                                         std::uint32_t outputs, std::uint32_t paths,
                                         std::size_t tap_step) {
  convolution::Config c{.partition = partition, .inputs = inputs, .outputs = outputs};
  for (std::uint32_t i = 0; i < paths; ++i) {
    c.irs.push_back(make_ir(1 + tap_step * i, i));
    c.paths.push_back({i % inputs, i, (i * 7) % outputs});
  }
  return c;
}

std::size_t frames_for(const convolution::Config& c, std::size_t extra) {
  std::size_t taps = 0;
  for (const auto& ir : c.irs) taps = std::max(taps, ir.size());
  return (convolution::partitions(taps, c.partition) + extra) * c.partition;
}

double direct_output(const convolution::Config& c, const Channels& in, std::uint32_t output,
                     std::size_t n) {
  double wet = 0;
  for (const auto& p : c.paths) {
    if (p.output != output) continue;
    const auto& h = c.irs[p.ir];
    const auto& x = in[p.input];
    const std::size_t m_end = std::min(h.size(), n + 1);
    for (std::size_t m = 0; m < m_end; ++m)
      wet += static_cast<double>(h[m]) * static_cast<double>(x[n - m]);
  }
  double y = static_cast<double>(c.wet) * wet;
  if (c.dry != 0) y += static_cast<double>(c.dry) * in[output][n];
  return y;
}

Channels stream_cpu(convolution::CpuConvolver& conv, const Channels& in) {
  const std::size_t B = conv.partition(), frames = in[0].size();
  Channels out(conv.outputs(), std::vector<float>(frames));
  std::vector<float> pin(B * conv.inputs()), pout(B * conv.outputs());
  for (std::size_t t = 0; t + B <= frames; t += B) {
    for (std::size_t c = 0; c < conv.inputs(); ++c)
      std::copy_n(in[c].begin() + t, B, pin.begin() + c * B);
    conv.process(pin, pout);
    for (std::size_t c = 0; c < conv.outputs(); ++c)
      std::copy_n(pout.begin() + c * B, B, out[c].begin() + t);
  }
  return out;
}

std::vector<std::size_t> check_frames(std::size_t frames, std::size_t spread) {
  std::vector<std::size_t> f;
  if (frames <= 2048 + spread) {
    for (std::size_t n = 0; n < frames; ++n) f.push_back(n);
    return f;
  }
  for (std::size_t n = 0; n < 1024; ++n) f.push_back(n);
  for (std::size_t i = 0; i < spread; ++i) f.push_back(1024 + i * (frames - 2048) / spread);
  for (std::size_t n = frames - 1024; n < frames; ++n) f.push_back(n);
  return f;
}

double max_error_vs_direct(const convolution::Config& c, const Channels& in, const Channels& got,
                           const std::vector<std::size_t>& frames) {
  double err = 0;
  for (std::uint32_t o = 0; o < c.outputs; ++o)
    for (std::size_t n : frames)
      err = std::max(err, std::abs(direct_output(c, in, o, n) - static_cast<double>(got[o][n])));
  return err;
}

double max_abs_diff(const Channels& a, const Channels& b) {
  double err = 0;
  for (std::size_t c = 0; c < a.size(); ++c)
    for (std::size_t n = 0; n < a[c].size(); ++n)
      err = std::max(err, std::abs(static_cast<double>(a[c][n]) - b[c][n]));
  return err;
}

double dbfs(double err) {
  return err > 0 ? 20 * std::log10(err) : -999.0;
}

}  // namespace sigpu::test
