// Transport blocks: CRC24A, segmentation, turbo coding and rate matching of every code block on
// the way out (36.212 5.1.1 - 5.1.5); HARQ combining, decoding and the CRC checks on the way in.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>

#include <sigpu/turbo.hpp>

#include "turbo/plan.hpp"

namespace sigpu::turbo {
namespace {

constexpr int kMaxTransportBlock = 1 << 20;
constexpr std::int64_t kMaxCodedBits = std::int64_t(1) << 24;

RateMatchParams rate_match_params(const CodeBlockPlan& cb, int rv) {
  return {.K = cb.K, .F = cb.F, .E = cb.E, .rv = rv, .N_cb = cb.N_cb};
}

// Filler bits are known zeros: the decoder gets them as certain. For float LLRs a value far
// above any channel LLR, small enough that the metrics keep their precision.
template <typename T>
T filler_llr() {
  if constexpr (std::is_floating_point_v<T>)
    return T(1.0e4);
  else
    return std::numeric_limits<T>::max();
}

template <typename T>
TransportBlockResult decode_any(std::span<const T> llr, const TransportBlockParams& p,
                                HarqBuffer<T>& harq, const DecoderOptions& o) {
  const auto cbs = plan_transport_block(p);
  check_options(o);
  // Refused before the HARQ buffer takes the transmission in.
  if (!std::is_same_v<T, float> && o.algorithm == Algorithm::log_map)
    throw Error("turbo: log-map needs float LLRs (the fixed-point decoders are max-log-map)");
  if (static_cast<std::int64_t>(llr.size()) != p.G)
    throw Error("turbo: transport block of A = " + std::to_string(p.A) + " got " +
                std::to_string(llr.size()) + " LLRs for G = " + std::to_string(p.G));
  if constexpr (std::is_floating_point_v<T>) {
    for (std::size_t i = 0; i < llr.size(); ++i)
      if (!std::isfinite(llr[i]))
        throw Error("turbo: transport block LLR " + std::to_string(i) + " is " +
                    std::to_string(llr[i]) + " (not finite)");
  }
  // With the cuda backend de-rate-matching, combining and decoding run on the GPU: the LLRs stay
  // on the device. Made before the HARQ buffer is touched: without a device it is refused.
  std::unique_ptr<CudaDecoder> gpu;
  if (resolve(o.backend) == Backend::cuda) gpu = std::make_unique<CudaDecoder>(o.device);
  std::vector<int> N_cb;
  for (const auto& cb : cbs) N_cb.push_back(cb.N_cb);
  if (harq.A == 0) {
    harq.A = p.A;
    harq.N_cb = N_cb;
    harq.soft.assign(std::accumulate(N_cb.begin(), N_cb.end(), std::size_t(0)), T(0));
    harq.transmissions = 0;
  } else if (harq.A != p.A || harq.N_cb != N_cb ||
             harq.soft.size() != std::accumulate(N_cb.begin(), N_cb.end(), std::size_t(0))) {
    throw Error("turbo: the HARQ buffer holds a transport block of A = " + std::to_string(harq.A) +
                " with " + std::to_string(harq.N_cb.size()) +
                " code block(s); this transmission is of A = " + std::to_string(p.A) + " with " +
                std::to_string(cbs.size()) +
                " (or other soft buffer sizes): clear() it for a new transport block");
  }

  DecoderOptions od = o;
  od.crc = cbs.size() > 1 ? BlockCrc::crc24b : BlockCrc::crc24a;
  std::vector<int> K;
  std::size_t total = 0;
  for (const auto& cb : cbs) {
    K.push_back(cb.K);
    total += llr_count(cb.K);
  }
  DecodeResult dr;
  if (gpu) {
    gpu->load_transport_block(llr, p, std::span<T>(harq.soft), filler_llr<T>());
    ++harq.transmissions;
    dr.seconds = gpu->run(od);
    dr.bits = gpu->bits();
    dr.iterations = gpu->iterations();
  } else {
    std::vector<T> d(total);
    std::size_t e_at = 0, soft_at = 0, d_at = 0;
    for (const auto& cb : cbs) {
      const RateMatchParams rm = rate_match_params(cb, p.rv);
      const std::span<T> soft(harq.soft.data() + soft_at, static_cast<std::size_t>(cb.N_cb));
      de_rate_match(llr.subspan(e_at, cb.E), rm, soft);
      soft_buffer_to_llrs(std::span<const T>(soft), rm,
                          std::span<T>(d.data() + d_at, llr_count(cb.K)), filler_llr<T>());
      e_at += cb.E;
      soft_at += cb.N_cb;
      d_at += llr_count(cb.K);
    }
    ++harq.transmissions;
    dr = decode(K, std::span<const T>(d), od);
  }
  Desegmented ds = desegment(dr.bits, plan_segmentation(p.A));
  TransportBlockResult r;
  r.bits = std::move(ds.bits);
  r.crc24a_ok = ds.crc24a_ok;
  r.crc24b_ok = std::move(ds.crc24b_ok);
  r.iterations = dr.iterations;
  r.seconds = dr.seconds;
  return r;
}

}  // namespace

std::vector<CodeBlockPlan> plan_transport_block(const TransportBlockParams& p) {
  const std::string tb = "turbo: transport block of A = " + std::to_string(p.A) + ": ";
  if (p.Q_m != 1 && p.Q_m != 2 && p.Q_m != 4 && p.Q_m != 6 && p.Q_m != 8)
    throw Error(tb + "Q_m = " + std::to_string(p.Q_m) + " (must be 1, 2, 4, 6 or 8)");
  if (p.N_L < 1 || p.N_L > 4)
    throw Error(tb + "N_L = " + std::to_string(p.N_L) + " (must be 1..4)");
  if (p.rv < 0 || p.rv > 3) throw Error(tb + "rv = " + std::to_string(p.rv) + " not in 0..3");
  // Above any LTE transport block (36.213's largest is under 400,000 bits per codeword); the
  // soft buffers of a larger one would outgrow what its G soft bits justify.
  if (p.A > kMaxTransportBlock)
    throw Error(tb + "larger than " + std::to_string(kMaxTransportBlock) + " bits");
  if (p.G > kMaxCodedBits)
    throw Error(tb + "G = " + std::to_string(p.G) + " is above " + std::to_string(kMaxCodedBits));
  const Segmentation seg = plan_segmentation(p.A);
  const std::int64_t per_symbol = std::int64_t(p.N_L) * p.Q_m;
  if (p.G < per_symbol * seg.C || p.G % per_symbol != 0)
    throw Error(tb + "G = " + std::to_string(p.G) + " must be a multiple of N_L Q_m = " +
                std::to_string(per_symbol) + " and give each of its " + std::to_string(seg.C) +
                " code blocks at least one symbol");
  std::vector<CodeBlockPlan> cbs(seg.C);
  for (int r = 0; r < seg.C; ++r) {
    CodeBlockPlan& cb = cbs[r];
    cb.K = seg.K[r];
    cb.F = r == 0 ? seg.F : 0;
    cb.E = code_block_E(p.G, p.N_L, p.Q_m, seg.C, r);
    cb.N_cb =
        p.limit.N_soft > 0 ? soft_buffer_size(cb.K, seg.C, p.limit) : circular_buffer_length(cb.K);
    soft_buffer_entries(rate_match_params(cb, p.rv));  // checks N_cb against K_w
  }
  return cbs;
}

std::vector<std::uint8_t> encode_transport_block(std::span<const std::uint8_t> tb,
                                                 const TransportBlockParams& p) {
  const auto cbs = plan_transport_block(p);
  for (std::size_t i = 0; i < tb.size(); ++i)
    if (tb[i] > 1)
      throw Error("turbo: transport block bit " + std::to_string(i) + " is " +
                  std::to_string(tb[i]) + " (not 0 or 1)");
  const auto blocks = segment(tb, plan_segmentation(p.A));  // checks tb.size() == A
  std::vector<std::uint8_t> out;
  out.reserve(static_cast<std::size_t>(p.G));
  std::size_t at = 0;
  for (const auto& cb : cbs) {
    const Codeword cw = encode(std::span<const std::uint8_t>(blocks.data() + at, cb.K));
    const auto e = rate_match(cw.d, rate_match_params(cb, p.rv));
    out.insert(out.end(), e.begin(), e.end());
    at += cb.K;
  }
  return out;
}

bool TransportBlockResult::ok() const {
  return crc24a_ok && std::all_of(crc24b_ok.begin(), crc24b_ok.end(), [](bool b) { return b; });
}

TransportBlockResult decode_transport_block(std::span<const float> llr,
                                            const TransportBlockParams& p, HarqBuffer<float>& harq,
                                            const DecoderOptions& o) {
  return decode_any(llr, p, harq, o);
}
TransportBlockResult decode_transport_block(std::span<const std::int16_t> llr,
                                            const TransportBlockParams& p,
                                            HarqBuffer<std::int16_t>& harq,
                                            const DecoderOptions& o) {
  return decode_any(llr, p, harq, o);
}
TransportBlockResult decode_transport_block(std::span<const std::int8_t> llr,
                                            const TransportBlockParams& p,
                                            HarqBuffer<std::int8_t>& harq,
                                            const DecoderOptions& o) {
  return decode_any(llr, p, harq, o);
}

}  // namespace sigpu::turbo
