// Rate matching for turbo coded transport channels (36.212 5.1.4.1) and its receive side, on the
// CPU. Everything goes through one table, the circular buffer map: for each position of w, the
// index of its bit in d0 | d1 | d2, or kNullBit for a dummy or filler bit (rate_match_index.hpp,
// whose index math the GPU kernels share).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/rate_match_index.hpp"

namespace sigpu::turbo {
namespace {

int subblock_rows(int K) {
  return (K + 4 + kSubblockColumns - 1) / kSubblockColumns;  // R_subblock
}

void check_params(const RateMatchParams& p) {
  check_block_size(p.K);
  const auto bad = [&](const std::string& what) {
    throw Error("turbo: rate matching for K = " + std::to_string(p.K) + ": " + what);
  };
  if (p.F < 0 || p.F >= p.K) bad("filler bits F = " + std::to_string(p.F) + " not in [0, K)");
  if (p.E < 0) bad("E = " + std::to_string(p.E) + " is negative");
  if (p.rv < 0 || p.rv > 3) bad("rv = " + std::to_string(p.rv) + " not in 0..3");
  const int K_w = circular_buffer_length(p.K);
  // With F < K every window of at least K_Pi positions holds systematic bits, so the
  // selection loop always finds non-NULL bits.
  if (p.N_cb != 0 && (p.N_cb < K_w / 3 || p.N_cb > K_w))
    bad("N_cb = " + std::to_string(p.N_cb) + " not in [K_w / 3, K_w] = [" +
        std::to_string(K_w / 3) + ", " + std::to_string(K_w) + "]");
}

// w_k -> index into d0 | d1 | d2 (each D = K + 4 long), over the first N_cb positions.
std::vector<std::int32_t> circular_buffer_map(const RateMatchParams& p) {
  const CircularBuffer b = make_circular_buffer(p.K, p.F, soft_buffer_entries(p), p.rv);
  std::vector<std::int32_t> map(b.N_cb);
  for (int j = 0; j < b.N_cb; ++j) map[j] = circular_buffer_source(b, j);
  return map;
}

// Calls f(position) for the E selected positions of w, in transmission order.
template <class F>
void for_each_selected(const RateMatchParams& p, const std::vector<std::int32_t>& map, F f) {
  const int N_cb = static_cast<int>(map.size());
  int j = make_circular_buffer(p.K, p.F, N_cb, p.rv).k0 % N_cb;
  for (int k = 0; k < p.E; j = j + 1 == N_cb ? 0 : j + 1) {
    if (map[j] == kNullBit) continue;
    f(j);
    ++k;
  }
}

template <class T>
void de_rate_match_impl(std::span<const T> llr, const RateMatchParams& p,
                        std::span<T> soft_buffer) {
  check_params(p);
  if (static_cast<int>(llr.size()) != p.E)
    throw Error("turbo: de_rate_match got " + std::to_string(llr.size()) +
                " LLRs for E = " + std::to_string(p.E));
  const auto map = circular_buffer_map(p);
  if (soft_buffer.size() != map.size())
    throw Error("turbo: soft buffer has " + std::to_string(soft_buffer.size()) +
                " entries, K = " + std::to_string(p.K) + " needs " + std::to_string(map.size()));
  std::size_t k = 0;
  for_each_selected(p, map,
                    [&](int j) { soft_buffer[j] = saturating_add(soft_buffer[j], llr[k++]); });
}

template <class T>
void soft_buffer_to_llrs_impl(std::span<const T> soft_buffer, const RateMatchParams& p,
                              std::span<T> llr, T filler_llr) {
  check_params(p);
  const auto map = circular_buffer_map(p);
  if (soft_buffer.size() != map.size())
    throw Error("turbo: soft buffer has " + std::to_string(soft_buffer.size()) +
                " entries, K = " + std::to_string(p.K) + " needs " + std::to_string(map.size()));
  if (llr.size() != llr_count(p.K))
    throw Error("turbo: soft_buffer_to_llrs needs " + std::to_string(llr_count(p.K)) +
                " LLRs for K = " + std::to_string(p.K) + ", got " + std::to_string(llr.size()));
  std::fill(llr.begin(), llr.end(), T(0));
  const std::size_t D = static_cast<std::size_t>(p.K) + 4;
  for (int f = 0; f < p.F; ++f) llr[f] = llr[D + f] = filler_llr;
  for (std::size_t j = 0; j < map.size(); ++j)
    if (map[j] != kNullBit) llr[map[j]] = soft_buffer[j];
}

}  // namespace

int circular_buffer_length(int K) {
  check_block_size(K);
  return 3 * kSubblockColumns * subblock_rows(K);
}

int soft_buffer_size(int K, int C, const SoftBufferLimit& l) {
  const int K_w = circular_buffer_length(K);
  if (C < 1) throw Error("turbo: soft_buffer_size: C = " + std::to_string(C) + " code blocks");
  if (l.N_soft < 1 || l.K_C < 1 || l.K_MIMO < 1 || l.M_DL_HARQ < 1)
    throw Error("turbo: soft buffer limit needs N_soft, K_C, K_MIMO and M_DL_HARQ >= 1 (N_soft = " +
                std::to_string(l.N_soft) + ")");
  constexpr int M_limit = 8;
  const std::int64_t N_IR =
      l.N_soft / (std::int64_t(l.K_C) * l.K_MIMO * std::min(l.M_DL_HARQ, M_limit));
  return static_cast<int>(std::min<std::int64_t>(N_IR / C, K_w));
}

int code_block_E(std::int64_t G, int N_L, int Q_m, int C, int r) {
  if (N_L < 1 || Q_m < 1 || C < 1 || r < 0 || r >= C || G < 0)
    throw Error("turbo: code_block_E: bad arguments G = " + std::to_string(G) +
                ", N_L = " + std::to_string(N_L) + ", Q_m = " + std::to_string(Q_m) +
                ", C = " + std::to_string(C) + ", r = " + std::to_string(r));
  const std::int64_t per_symbol = std::int64_t(N_L) * Q_m;
  if (G % per_symbol != 0)
    throw Error("turbo: code_block_E: G = " + std::to_string(G) +
                " is not a multiple of N_L Q_m = " + std::to_string(per_symbol));
  const std::int64_t Gp = G / per_symbol, gamma = Gp % C;
  const std::int64_t symbols = r <= C - gamma - 1 ? Gp / C : (Gp + C - 1) / C;
  const std::int64_t E = per_symbol * symbols;
  if (E > std::numeric_limits<int>::max())
    throw Error("turbo: code_block_E: E = " + std::to_string(E) + " is too large");
  return static_cast<int>(E);
}

int soft_buffer_entries(const RateMatchParams& p) {
  check_params(p);
  return p.N_cb ? p.N_cb : circular_buffer_length(p.K);
}

std::vector<std::uint8_t> rate_match(std::span<const std::uint8_t> d, const RateMatchParams& p) {
  check_params(p);
  if (d.size() != llr_count(p.K))
    throw Error("turbo: rate_match needs " + std::to_string(llr_count(p.K)) +
                " encoded bits for K = " + std::to_string(p.K) + ", got " +
                std::to_string(d.size()));
  const auto map = circular_buffer_map(p);
  std::vector<std::uint8_t> e;
  e.reserve(p.E);
  for_each_selected(p, map, [&](int j) { e.push_back(d[map[j]] & 1); });
  return e;
}

void de_rate_match(std::span<const float> llr, const RateMatchParams& p,
                   std::span<float> soft_buffer) {
  de_rate_match_impl(llr, p, soft_buffer);
}
void de_rate_match(std::span<const std::int16_t> llr, const RateMatchParams& p,
                   std::span<std::int16_t> soft_buffer) {
  de_rate_match_impl(llr, p, soft_buffer);
}
void de_rate_match(std::span<const std::int8_t> llr, const RateMatchParams& p,
                   std::span<std::int8_t> soft_buffer) {
  de_rate_match_impl(llr, p, soft_buffer);
}

void soft_buffer_to_llrs(std::span<const float> soft_buffer, const RateMatchParams& p,
                         std::span<float> llr, float filler_llr) {
  soft_buffer_to_llrs_impl(soft_buffer, p, llr, filler_llr);
}
void soft_buffer_to_llrs(std::span<const std::int16_t> soft_buffer, const RateMatchParams& p,
                         std::span<std::int16_t> llr, std::int16_t filler_llr) {
  soft_buffer_to_llrs_impl(soft_buffer, p, llr, filler_llr);
}
void soft_buffer_to_llrs(std::span<const std::int8_t> soft_buffer, const RateMatchParams& p,
                         std::span<std::int8_t> llr, std::int8_t filler_llr) {
  soft_buffer_to_llrs_impl(soft_buffer, p, llr, filler_llr);
}

}  // namespace sigpu::turbo
