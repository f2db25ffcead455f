// Transport block simulation with HARQ: the whole downlink chain of 36.212 5.1 and 36.211 7.1
// over AWGN or flat Rayleigh fading.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/device_rate_match.hpp"
#include "turbo/modulation.hpp"
#include "turbo/philox.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {
namespace {

constexpr int kRvSequence[4] = {0, 2, 3, 1};
constexpr int kMaxTransmissions = 16;

struct BlockOutcome {
  int transmissions = 0;  ///< sent
  bool delivered = false;
  std::uint64_t iterations = 0, code_blocks = 0;
  double seconds = 0;
};

// The LLRs of one transmission's bits e: symbols of Q_m bits, y = h x + n, demapped. Gaussian
// pairs 2i (fading) and 2i + 1 (noise) of frame `frame` belong to symbol i.
std::vector<float> channel_llrs(const std::vector<std::uint8_t>& e, int Q_m, Fading fading,
                                double N0, std::uint64_t seed, std::uint64_t frame) {
  std::vector<float> llr(e.size());
  const double sigma = std::sqrt(N0 / 2.0);
  double l[6];
  for (std::size_t i = 0; i * Q_m < e.size(); ++i) {
    const std::complex<double> x = modulate(e.data() + i * Q_m, Q_m);
    std::complex<double> h(1.0, 0.0);
    double a, b;
    if (fading == Fading::rayleigh) {
      channel_gaussian_pair(seed, frame, 2 * i, a, b);
      h = std::complex<double>(a, b) * std::sqrt(0.5);
    }
    channel_gaussian_pair(seed, frame, 2 * i + 1, a, b);
    const std::complex<double> y = h * x + sigma * std::complex<double>(a, b);
    demap_max_log(y, h, N0, Q_m, l);
    for (int j = 0; j < Q_m; ++j) llr[i * Q_m + j] = static_cast<float>(l[j]);
  }
  return llr;
}

// The code blocks' codewords d0 | d1 | d2 of transport block tb, concatenated: what rate
// matching on the GPU takes.
std::vector<std::uint8_t> codewords(const std::vector<std::uint8_t>& tb, int A) {
  const Segmentation seg = plan_segmentation(A);
  const auto blocks = segment(tb, seg);
  std::vector<std::uint8_t> out;
  std::size_t at = 0;
  for (int k : seg.K) {
    const Codeword cw = encode(std::span<const std::uint8_t>(blocks.data() + at, k));
    out.insert(out.end(), cw.d.begin(), cw.d.end());
    at += k;
  }
  return out;
}

template <typename T>
BlockOutcome run_block(const TransportSimOptions& o, const DecoderOptions& dec, double N0,
                       int frac_bits, std::uint64_t index) {
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + index);
  std::vector<std::uint8_t> tb(o.A);
  for (auto& b : tb) b = static_cast<std::uint8_t>(rng() & 1u);
  TransportBlockParams p{.A = o.A, .G = o.G, .Q_m = o.Q_m, .limit = o.limit};
  HarqBuffer<T> harq;
  BlockOutcome out;
  // The cuda backend rate matches on the GPU too (the same bits as encode_transport_block()).
  const bool gpu = resolve(dec.backend) == Backend::cuda;
  const auto code = gpu ? codewords(tb, o.A) : std::vector<std::uint8_t>();
  for (int t = 0; t < o.max_transmissions && !out.delivered; ++t) {
    p.rv = kRvSequence[t % 4];
    const auto e = gpu ? rate_match_on_device(code, p, dec.device) : encode_transport_block(tb, p);
    const auto llr = channel_llrs(e, o.Q_m, o.fading, N0, o.seed,
                                  index * kMaxTransmissions + static_cast<std::uint64_t>(t));
    TransportBlockResult r;
    if constexpr (std::is_same_v<T, float>) {
      r = decode_transport_block(llr, p, harq, dec);
    } else {
      std::vector<T> q(llr.size());
      quantize(llr, frac_bits, std::span<T>(q));
      r = decode_transport_block(std::span<const T>(q), p, harq, dec);
    }
    ++out.transmissions;
    out.delivered = r.ok() && r.bits == tb;
    for (int it : r.iterations) out.iterations += it;
    out.code_blocks += r.iterations.size();
    out.seconds += r.seconds;
  }
  return out;
}

}  // namespace

TransportSimPoint simulate_transport(const TransportSimOptions& o0, double snr_db) {
  TransportSimOptions o = o0;
  if (!std::isfinite(snr_db)) throw Error("turbo: SNR must be finite");
  if (o.Q_m != 2 && o.Q_m != 4 && o.Q_m != 6)
    throw Error("turbo: simulation Q_m = " + std::to_string(o.Q_m) +
                " (must be 2, 4 or 6: QPSK, 16QAM, 64QAM)");
  if (o.blocks == 0) throw Error("turbo: simulation of zero transport blocks");
  if (o.max_transmissions < 1 || o.max_transmissions > kMaxTransmissions)
    throw Error("turbo: max transmissions = " + std::to_string(o.max_transmissions) +
                " (must be 1.." + std::to_string(kMaxTransmissions) + ")");
  if (o.G == 0) {
    if (!(o.rate > 0.0 && o.rate < 1.0))
      throw Error("turbo: code rate = " + std::to_string(o.rate) + " (must be in (0, 1))");
    const double symbols = std::round((o.A + 24) / o.rate / o.Q_m);
    if (!(symbols < 1e9))
      throw Error("turbo: code rate = " + std::to_string(o.rate) + " gives too many coded bits");
    o.G = std::max<std::int64_t>(1, static_cast<std::int64_t>(symbols)) * o.Q_m;
  }
  plan_transport_block({.A = o.A, .G = o.G, .Q_m = o.Q_m, .limit = o.limit});  // checks them
  check_options(o.decoder);
  const int frac = o.frac_bits >= 0 ? o.frac_bits : (o.llr == LlrType::i8 ? 2 : 6);
  if (o.llr != LlrType::f32) check_frac_bits(frac, o.llr == LlrType::i16 ? 16 : 8);

  // Blocks are independent (bits seeded per block, noise keyed by block and transmission): on
  // the CPU they run on all cores, each decoded serially; the GPU decodes one after another.
  DecoderOptions dec = o.decoder;
  const Backend backend = resolve(dec.backend);
  const bool spread = backend != Backend::cuda;
  if (spread) dec.backend = Backend::cpu;
  const double N0 = std::pow(10.0, -snr_db / 10.0);
  std::vector<BlockOutcome> outcome(o.blocks);
  auto work = [&](std::size_t first, std::size_t end) {
    for (std::size_t b = first; b < end; ++b) {
      switch (o.llr) {
        case LlrType::f32:
          outcome[b] = run_block<float>(o, dec, N0, frac, b);
          break;
        case LlrType::i16:
          outcome[b] = run_block<std::int16_t>(o, dec, N0, frac, b);
          break;
        case LlrType::i8:
          outcome[b] = run_block<std::int8_t>(o, dec, N0, frac, b);
          break;
      }
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  if (spread && backend == Backend::cpu_parallel)
    ThreadPool::shared().parallel_for(outcome.size(), work, 1);
  else
    work(0, outcome.size());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  TransportSimPoint pt;
  pt.snr_db = snr_db;
  pt.blocks = o.blocks;
  pt.sent.assign(o.max_transmissions, 0);
  pt.failed.assign(o.max_transmissions, 0);
  double decode_seconds = 0;
  for (const auto& b : outcome) {
    for (int t = 0; t < o.max_transmissions; ++t) {
      if (t < b.transmissions) ++pt.sent[t];
      if (!(b.delivered && t >= b.transmissions - 1)) ++pt.failed[t];
    }
    pt.transmissions += b.transmissions;
    pt.delivered_bits += b.delivered ? std::uint64_t(o.A) : 0;
    pt.iterations += b.iterations;
    pt.code_blocks += b.code_blocks;
    decode_seconds += b.seconds;
  }
  pt.decode_seconds = decode_seconds;
  pt.seconds = wall;
  return pt;
}

}  // namespace sigpu::turbo
