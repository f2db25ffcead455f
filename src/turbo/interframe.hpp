// The CPU decoder for batches of whole code blocks (P = 1) with fixed-point LLRs, max-log-MAP:
// code blocks of one size decode side by side in the lanes of AVX2 vectors (16 blocks in
// 16-bit lanes for int8 LLRs, 8 in 32-bit lanes for int16), one instruction stepping every
// block's trellis at once. Its output is the scalar decoder's (decode_cpu), bit for bit.
#pragma once

#include <cstdint>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {

/// Decodes every block of plan (each with P = 1) as decode_cpu<FixedTraits<T>, false> does,
/// into r (sized as for it), the groups of blocks spread over pool when given. Returns false,
/// having done nothing, where the CPU lacks AVX2.
bool decode_interframe(const BatchPlan& plan, const std::int8_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r);
bool decode_interframe(const BatchPlan& plan, const std::int16_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r);

}  // namespace sigpu::turbo
