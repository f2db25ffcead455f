// BPSK / Gray QPSK over AWGN with counter-based noise, and LLR quantisation.
#include <algorithm>
#include <cmath>
#include <string>

#include <sigpu/turbo.hpp>

#include "turbo/channel.hpp"
#include "turbo/philox.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {

double noise_sigma(int K, const ChannelOptions& o) {
  check_block_size(K);
  // Unit-energy symbols: BPSK Eb = 1 / R, QPSK Eb = 1 / (2 R); noise per real dimension N0 / 2.
  return channel_sigma(K, std::pow(10.0, o.ebn0_db / 10.0),
                       o.modulation == Modulation::bpsk ? 1.0 : 2.0);
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
  const ChannelSymbol cs =
      channel_symbol(cw.K, std::pow(10.0, o.ebn0_db / 10.0), o.modulation == Modulation::qpsk);
  // BPSK sends bit j as one real symbol; QPSK sends bits 2i, 2i+1 on I and Q of symbol i.
  // Either way bit j sees real noise sample j.
  for (std::size_t j = 0; j < n; j += 2) {
    double g[2];
    channel_gaussian_pair(o.seed, frame, j >> 1, g[0], g[1]);
    for (std::size_t m = j; m < std::min(j + 2, n); ++m)
      llr[m] = channel_llr(cs.amp, cs.sigma, cs.scale, cw.d[m], g[m - j]);
  }
}

namespace {
template <typename T>
void quantize_to(std::span<const float> llr, int frac_bits, std::span<T> out) {
  check_frac_bits(frac_bits, sizeof(T) * 8);
  if (out.size() != llr.size())
    throw Error("turbo: quantize output holds " + std::to_string(out.size()) + " values, input " +
                std::to_string(llr.size()));
  const float s = std::ldexp(1.0f, frac_bits);
  for (std::size_t i = 0; i < llr.size(); ++i) {
    if (!std::isfinite(llr[i])) throw Error("turbo: LLR " + std::to_string(i) + " is not finite");
    out[i] = quantize_llr<T>(llr[i], s);
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
