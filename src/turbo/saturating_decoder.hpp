// The int8 decoder with saturating 8-bit metrics (Int8Metrics::saturating) in plain C++: the
// scalar twin of the inter-frame decoder's 8-bit lanes (interframe_lanes.hpp), which must give
// its bits, LLRs and iterations exactly, and what runs where the CPU has no such lanes.
//
// Every value is an int8: the branch metrics, alpha, beta, the extrinsics and the a-posteriori
// LLRs. Sums and differences saturate to [-128, 127] (x86's adds/subs_epi8). The channel LLRs and
// the a-priori sum A = Ls + La are bounded to +-63 and alpha and beta are normalised after every
// trellis step by subtracting the largest of the 8, so that they lie in [-128, 0]: a step adds
// at most 126, so no metric ever saturates upwards, and one saturates downwards only where its
// state is already 128 LSBs (32 at 2 fractional bits) less likely than the best, where it no
// longer decides a maximum. The extrinsic is (le q) >> 4 (q: the scaling in 1/16 steps, 12 for
// 0.75) within +-127. Where a saturating sum is taken in two steps, the order is part of the
// arithmetic, and the twins keep it:
//   forward  alpha_{k+1}(n) = max over its two branches of alpha_k(s) + g(u, p), with
//            g(1, 0) = 0 - A, g(0, 1) = 0 - Lp, g(1, 1) = (0 - A) - Lp (g(0, 0) = 0 adds nothing)
//   backward t(s, u) = beta_{k+1}(next(s, u)) - p(s, u) Lp,
//            beta_k(s) = max(t(s, 0), t(s, 1) - A),
//            l(u) = max_s alpha_k(s) + t(s, u), le = l(0) - l(1), app = A + le
// with A = bound(Ls + La) and Lp = bound(Lp). beta starts from the three tail steps (their
// LLRs bounded), each normalised too.
#pragma once

#include <cstdint>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {

/// Whether decode() decodes LLRs of type t with options o on the CPU in saturating metrics: int8
/// LLRs, asked for or by default (automatic) where it applies (P = 1, max-log-map). Throws
/// UnsupportedError where asked for and it does not apply.
bool saturating_metrics(LlrType t, const DecoderOptions& o);

/// Decodes every block of plan (each with P = 1, max-log-map) from int8 LLRs with saturating
/// 8-bit metrics into r (sized as for decode_cpu), the blocks spread over pool when given.
void decode_saturating(const BatchPlan& plan, const std::int8_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r);

}  // namespace sigpu::turbo
