// BPSK / Gray QPSK over AWGN with counter-based noise, and LLR quantisation.
#include <algorithm>
#include <cmath>
#include <string>

#include <sigpu/turbo.hpp>

#include "turbo/philox.hpp"

namespace sigpu::turbo {

double noise_sigma(int K, const ChannelOptions& o) {
  check_block_size(K);
  const double rate = static_cast<double>(K) / (3.0 * K + 12.0);
  const double ebn0 = std::pow(10.0, o.ebn0_db / 10.0);
  // Unit-energy symbols: BPSK Eb = 1 / R, QPSK Eb = 1 / (2 R); noise per real dimension N0 / 2.
  const double bits_per_symbol = o.modulation == Modulation::bpsk ? 1.0 : 2.0;
  const double n0 = 1.0 / (bits_per_symbol * rate * ebn0);
  return std::sqrt(n0 / 2.0);
}

void awgn_llrs(const Codeword& cw, const ChannelOptions& o, std::uint64_t frame,
               std::span<float> llr) {
  check_block_size(cw.K);
  const std::size_t n = llr_count(cw.K);
  if (cw.d.size() != n)
    throw Error("turbo: codeword holds " + std::to_string(cw.d.size()) + " bits, expected " +
                std::to_string(n));
  if (llr.size() != n)
    throw Error("turbo: LLR buffer holds " + std::to_string(llr.size()) +
                " values, K = " + std::to_string(cw.K) + " needs " + std::to_string(n));
  if (!std::isfinite(o.ebn0_db)) throw Error("turbo: Eb/N0 must be finite");
  const double sigma = noise_sigma(cw.K, o);
  const double amp = o.modulation == Modulation::bpsk ? 1.0 : std::sqrt(0.5);
  const double scale = 2.0 * amp / (sigma * sigma);
  // BPSK sends bit j as one real symbol; QPSK sends bits 2i, 2i+1 on I and Q of symbol i.
  // Either way bit j sees real noise sample j.
  for (std::size_t j = 0; j < n; j += 2) {
    double g[2];
    channel_gaussian_pair(o.seed, frame, j >> 1, g[0], g[1]);
    for (std::size_t m = j; m < std::min(j + 2, n); ++m) {
      const double y = amp * (1.0 - 2.0 * cw.d[m]) + sigma * g[m - j];
      llr[m] = static_cast<float>(scale * y);
    }
  }
}

namespace {
template <typename T>
void quantize_to(std::span<const float> llr, int frac_bits, std::span<T> out) {
  constexpr int kBits = sizeof(T) * 8;
  if (frac_bits < 0 || frac_bits >= kBits)
    throw Error("turbo: fractional bits " + std::to_string(frac_bits) + " out of range for int" +
                std::to_string(kBits));
  if (out.size() != llr.size())
    throw Error("turbo: quantize output holds " + std::to_string(out.size()) + " values, input " +
                std::to_string(llr.size()));
  const float max = static_cast<float>((1 << (kBits - 1)) - 1);
  const float s = std::ldexp(1.0f, frac_bits);
  for (std::size_t i = 0; i < llr.size(); ++i) {
    if (!std::isfinite(llr[i])) throw Error("turbo: LLR " + std::to_string(i) + " is not finite");
    out[i] = static_cast<T>(std::clamp(std::nearbyint(llr[i] * s), -max, max));
  }
}
}  // namespace

void quantize(std::span<const float> llr, int frac_bits, std::span<std::int16_t> out) {
  quantize_to(llr, frac_bits, out);
}
void quantize(std::span<const float> llr, int frac_bits, std::span<std::int8_t> out) {
  quantize_to(llr, frac_bits, out);
}

}  // namespace sigpu::turbo
