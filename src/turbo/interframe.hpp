// The CPU decoder for batches of whole code blocks (P = 1) with fixed-point LLRs, max-log-MAP:
// code blocks of one size decode side by side in the lanes of SIMD vectors, one instruction
// stepping every block's trellis at once (interframe_lanes.hpp). AVX2 holds 16 blocks in
// 16-bit lanes for int8 LLRs and 8 in 32-bit lanes for int16; AVX-512 twice as many. Its output
// is the scalar decoder's (decode_cpu), bit for bit, in every instruction set. With saturating
// metrics (Int8Metrics::saturating) int8 LLRs take 8-bit lanes, 32 blocks in AVX2 and 64 in
// AVX-512, and give decode_saturating's output (saturating_decoder.hpp) instead.
#pragma once

#include <cstdint>
#include <string_view>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {

/// The instruction sets of the inter-frame decoder, narrowest first; scalar: none (decode_cpu).
enum class Isa { scalar, avx2, avx512 };

/// "scalar", "avx2" or "avx512".
std::string_view to_string(Isa isa);

/// Whether this CPU and this build run the inter-frame decoder in isa (scalar: always).
bool cpu_supports(Isa isa);

/// The instruction set decode() uses, chosen once: the widest this CPU supports, or the
/// environment's SIGPU_TURBO_ISA (scalar, avx2 or avx512) where set. Throws UsageError for
/// another value, UnsupportedError for an instruction set this CPU lacks.
Isa interframe_isa();

/// Blocks decoded side by side in isa for LLRs of type t (0: scalar or float LLRs), in 8-bit
/// lanes where saturating (int8 only).
int interframe_lanes(Isa isa, LlrType t, bool saturating = false);

/// Decodes every block of plan (each with P = 1) as decode_cpu<FixedTraits<T>, false> does,
/// into r (sized as for it), in isa, the groups of blocks spread over pool when given. Returns
/// false, having done nothing, for Isa::scalar or an instruction set this CPU lacks.
bool decode_interframe(const BatchPlan& plan, const std::int8_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r, Isa isa);
bool decode_interframe(const BatchPlan& plan, const std::int16_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r, Isa isa);
/// The same in saturating 8-bit lanes: decode_saturating's output.
bool decode_interframe_saturating(const BatchPlan& plan, const std::int8_t* llr,
                                  const DecoderOptions& o, ThreadPool* pool, DecodeResult& r,
                                  Isa isa);

}  // namespace sigpu::turbo
