// The int8 decoder with saturating 8-bit metrics, one block at a time in plain C++
// (saturating_decoder.hpp has the arithmetic). Written from the trellis state by state, keeping
// every alpha of the block: not the SIMD decoder's windows, pairs and checkpoints.
#include "turbo/saturating_decoder.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sigpu::turbo {
namespace {

using Metrics = std::array<std::int8_t, 8>;

std::int8_t saturate(int v) {
  return static_cast<std::int8_t>(std::clamp(v, -128, 127));
}
std::int8_t adds(std::int8_t a, std::int8_t b) {
  return saturate(a + b);
}
std::int8_t subs(std::int8_t a, std::int8_t b) {
  return saturate(a - b);
}

// The trellis of 36.212 5.1.3.2.1 (map_decoder.hpp): state s = r0 r1 r2 (r0 the newest bit),
// input u, feedback a = u ^ r1 ^ r2, parity a ^ r0 ^ r2, next state a r0 r1.
struct Trellis {
  int next[8][2], parity[8][2];
  Trellis() {
    for (int s = 0; s < 8; ++s)
      for (int u = 0; u < 2; ++u) {
        const int r0 = s >> 2, r1 = (s >> 1) & 1, r2 = s & 1, a = u ^ r1 ^ r2;
        next[s][u] = a << 2 | r0 << 1 | r1;
        parity[s][u] = a ^ r0 ^ r2;
      }
  }
};
const Trellis kTrellis;

constexpr std::int8_t kUnreachable = -128;
constexpr int kBound = 63;

std::int8_t bound(std::int8_t x) {
  return static_cast<std::int8_t>(std::clamp<int>(x, -kBound, kBound));
}

Metrics start() {
  Metrics m;
  m.fill(kUnreachable);
  m[0] = 0;
  return m;
}

void normalise(Metrics& m) {
  const std::int8_t top = *std::max_element(m.begin(), m.end());
  for (auto& x : m) x = subs(x, top);
}

Metrics forward_step(const Metrics& al, std::int8_t A, std::int8_t Lp) {
  const std::int8_t na = subs(0, A), nlp = subs(0, Lp);
  const std::int8_t g[2][2] = {{0, nlp}, {na, subs(na, Lp)}};
  Metrics n;
  n.fill(kUnreachable);
  for (int s = 0; s < 8; ++s)
    for (int u = 0; u < 2; ++u) {
      const int p = kTrellis.parity[s][u];
      const std::int8_t v = (u | p) ? adds(al[s], g[u][p]) : al[s];
      std::int8_t& to = n[kTrellis.next[s][u]];
      to = std::max(to, v);
    }
  normalise(n);
  return n;
}

/// beta_k from beta_{k+1} (in be); with alpha_k, the extrinsic l(0) - l(1) in le.
void backward_step(Metrics& be, std::int8_t A, std::int8_t Lp, const Metrics* alpha,
                   std::int8_t& le) {
  Metrics nb;
  std::int8_t l[2] = {kUnreachable, kUnreachable};
  for (int s = 0; s < 8; ++s) {
    std::int8_t t[2];
    for (int u = 0; u < 2; ++u) {
      const std::int8_t b = be[kTrellis.next[s][u]];
      t[u] = kTrellis.parity[s][u] ? subs(b, Lp) : b;
      if (alpha) l[u] = std::max(l[u], adds((*alpha)[s], t[u]));
    }
    nb[s] = std::max(t[0], subs(t[1], A));
  }
  normalise(nb);
  be = nb;
  le = subs(l[0], l[1]);
}

std::int8_t scaled(std::int8_t le, int q) {
  return static_cast<std::int8_t>(std::clamp((le * q) >> 4, -127, 127));
}

/// One block's decoding state: its LLRs, extrinsics and scratch.
struct Block {
  int K = 0;
  const std::int8_t* llr = nullptr;  ///< d0 | d1 | d2, K + 4 each
  const std::uint16_t* pi = nullptr;
  std::vector<std::int8_t> ext[2];  ///< by information bit, of component 0 and 1
  std::vector<std::int8_t> app;
  std::vector<Metrics> alpha;
  std::vector<std::int8_t> A;

  /// Channel LLR n of stream 0, 1 or 2, bounded.
  std::int8_t d(int stream, int n) const { return bound(llr[stream * (K + 4) + n]); }

  /// Component c's half-iteration: the extrinsics of c from the other's, and the a-posteriori
  /// LLRs (by information bit) where decide.
  void half_iteration(int c, int q, bool decide) {
    const auto bit = [&](int k) { return c == 0 ? k : static_cast<int>(pi[k]); };
    const std::vector<std::int8_t>& ext_in = ext[1 - c];
    Metrics al = start();
    for (int k = 0; k < K; ++k) {
      alpha[k] = al;
      A[k] = bound(adds(llr[bit(k)], ext_in[bit(k)]));
      al = forward_step(al, A[k], d(1 + c, k));
    }
    Metrics be = start();
    std::int8_t unused;
    for (int j = 2; j >= 0; --j) {  // the tail: x_{K+j}, z_{K+j} of component c
      const int mx = 2 * j, mz = 2 * j + 1;
      backward_step(be, d(mx % 3, K + 2 * c + mx / 3), d(mz % 3, K + 2 * c + mz / 3), nullptr,
                    unused);
    }
    for (int k = K - 1; k >= 0; --k) {
      std::int8_t le;
      backward_step(be, A[k], d(1 + c, k), &alpha[k], le);
      ext[c][bit(k)] = scaled(le, q);
      if (decide) app[bit(k)] = adds(A[k], le);
    }
  }
};

/// Decodes block b of plan into r, as decode_cpu's iterations and early termination go.
void decode_block(const BatchPlan& plan, const std::int8_t* llr, int b, const DecoderOptions& o,
                  DecodeResult& r) {
  const BlockDesc& desc = plan.blocks[b];
  thread_local Block blk;
  blk.K = desc.K;
  blk.llr = llr + desc.llr_offset;
  blk.pi = plan.pi.data() + desc.perm_offset;
  for (auto& e : blk.ext) e.assign(desc.K, 0);
  blk.app.assign(desc.K, 0);
  blk.alpha.resize(desc.K);
  blk.A.resize(desc.K);
  const int q = scale_q4(o.scaling);
  const auto crc = o.crc == BlockCrc::crc24a ? crc24a : crc24b;
  const std::span<std::uint8_t> bits(r.bits.data() + desc.bit_offset, desc.K);
  r.iterations[b] = o.iterations;
  for (int it = 0; it < o.iterations; ++it) {
    const bool last = it == o.iterations - 1;
    const bool check = o.early_termination && !last && it + 1 >= o.min_iterations;
    blk.half_iteration(0, q, false);
    blk.half_iteration(1, q, last || check);
    if (!last && !check) continue;
    for (int n = 0; n < desc.K; ++n) {
      bits[n] = blk.app[n] < 0 ? 1 : 0;
      if (o.output_llrs) r.llr[desc.bit_offset + n] = blk.app[n];
    }
    if (check && crc(bits) == 0) {
      r.iterations[b] = it + 1;
      return;
    }
  }
}

}  // namespace

bool saturating_metrics(LlrType t, const DecoderOptions& o) {
  if (o.int8_metrics == Int8Metrics::exact) return false;
  if (t != LlrType::i8) {
    if (o.int8_metrics == Int8Metrics::saturating)
      throw UnsupportedError("turbo: saturating int8 metrics need int8 LLRs (here " +
                             std::string(to_string(t)) + ")");
    return false;
  }
  const bool applies = o.subdecoders == 1 && o.algorithm == Algorithm::max_log_map &&
                       resolve(o.backend) != Backend::cuda;
  if (o.int8_metrics == Int8Metrics::saturating && !applies)
    throw UnsupportedError(
        "turbo: saturating int8 metrics run on the CPU with P = 1 and max-log-map (here P = " +
        std::to_string(o.subdecoders) +
        (o.algorithm == Algorithm::log_map ? ", log-map" : ", max-log-map") + ", backend " +
        std::string(to_string(resolve(o.backend))) + ")");
  return applies;
}

void decode_saturating(const BatchPlan& plan, const std::int8_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r) {
  auto work = [&](std::size_t first, std::size_t end) {
    for (std::size_t b = first; b < end; ++b) decode_block(plan, llr, static_cast<int>(b), o, r);
  };
  if (pool)
    pool->parallel_for(plan.blocks.size(), work, 1);
  else
    work(0, plan.blocks.size());
}

}  // namespace sigpu::turbo
