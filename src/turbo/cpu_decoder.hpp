// The CPU decoders: the parallel scheme (strict semantics) run serially or on all cores, for
// any traits class of map_decoder.hpp (decoder.cpp's decode(), and tests that check other
// arithmetics against it).
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/map_decoder.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {

/// Runs the parallel scheme (strict semantics) on the CPU. With `pool` the sub-decoders of a
/// half-iteration are spread over all cores; without it they run one after another. r holds
/// room for the bits (and with o.output_llrs the LLRs) of plan.total_bits, and the blocks'
/// iterations.
template <class Tr, bool kLogMap>
void decode_cpu(const BatchPlan& plan, const typename Tr::Llr* llr, const DecoderOptions& o,
                ThreadPool* pool, DecodeResult& r) {
  using Llr = typename Tr::Llr;
  using M = typename Tr::Metric;
  std::vector<Llr> ext1(plan.total_bits, Llr(0)), ext2(plan.total_bits, Llr(0));
  std::vector<M> alpha_b(std::size_t(plan.total_bounds) * 8 * 4, M(0)),
      beta_b(alpha_b.size(), M(0));
  const std::size_t scratch_len = std::size_t(plan.max_sub_len) * 8;

  HalfIteration<Tr> h;
  h.blocks = plan.blocks.data();
  h.llr = llr;
  h.pi = plan.pi.data();
  h.alpha_bounds = alpha_b.data();
  h.beta_bounds = beta_b.data();
  h.total_bounds = plan.total_bounds;
  h.scale = kLogMap ? 1.0f : o.scaling;
  h.scale_q4 = scale_q4(o.scaling);
  const int nblocks = static_cast<int>(plan.blocks.size());
  // Iteration after which a block passed its CRC24B (0: still decoding). Blocks that stopped
  // are skipped; their bits and LLRs stay those of that iteration.
  std::vector<int> done_at(nblocks, 0);
  auto for_range = [&](std::size_t n, std::size_t grain, const auto& fn) {
    if (pool)
      pool->parallel_for(n, fn, grain);
    else
      fn(std::size_t(0), n);
  };

  for (int it = 0; it < o.iterations; ++it) {
    const bool last = it == o.iterations - 1;
    for (int c = 0; c < 2; ++c) {
      h.select(it, c, ext1.data(), ext2.data());
      const bool decide = c == 1 && (last || (o.early_termination && it + 1 >= o.min_iterations));
      h.bits = decide ? r.bits.data() : nullptr;
      h.llr_out = decide && o.output_llrs ? r.llr.data() : nullptr;
      auto work = [&](std::size_t first, std::size_t end) {
        thread_local std::vector<M> scratch;
        if (scratch.size() < scratch_len) scratch.resize(scratch_len);
        int b = find_block(h.blocks, nblocks, static_cast<std::uint32_t>(first));
        for (std::size_t t = first; t < end; ++t) {
          while (b + 1 < nblocks && h.blocks[b + 1].sub_offset <= t) ++b;
          if (done_at[b]) continue;
          const BlockDesc& d = h.blocks[b];
          decode_subblock<Tr, kLogMap>(h, d, static_cast<int>(t - d.sub_offset), scratch.data());
        }
      };
      // Chunks of about 6144 trellis steps keep the scheduling cost small.
      const std::size_t per_sub = std::max<std::size_t>(1, plan.total_bits / plan.total_subs);
      for_range(plan.total_subs, std::max<std::size_t>(1, 6144 / per_sub), work);
    }
    if (o.early_termination && !last && it + 1 >= o.min_iterations) {
      const auto crc = o.crc == BlockCrc::crc24a ? crc24a : crc24b;
      for_range(plan.blocks.size(), 1, [&](std::size_t first, std::size_t end) {
        for (std::size_t b = first; b < end; ++b) {
          const BlockDesc& d = plan.blocks[b];
          if (!done_at[b] &&
              crc(std::span<const std::uint8_t>(r.bits.data() + d.bit_offset, d.K)) == 0)
            done_at[b] = it + 1;
        }
      });
    }
  }
  for (int b = 0; b < nblocks; ++b) r.iterations[b] = done_at[b] ? done_at[b] : o.iterations;
}

}  // namespace sigpu::turbo
