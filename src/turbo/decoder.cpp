// The CPU decoders (serial reference and multi-threaded parallel scheme) and the public decode()
// entry points, which dispatch to the CPU or the GPU.
#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/map_decoder.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {
namespace {

/// Runs the parallel scheme (strict semantics) on the CPU. With `pool` the sub-decoders of a
/// half-iteration are spread over all cores; without it they run one after another.
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
      const bool decide = c == 1 && (last || o.early_termination);
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
    if (o.early_termination && !last) {
      for_range(plan.blocks.size(), 1, [&](std::size_t first, std::size_t end) {
        for (std::size_t b = first; b < end; ++b) {
          const BlockDesc& d = plan.blocks[b];
          if (!done_at[b] &&
              crc24b(std::span<const std::uint8_t>(r.bits.data() + d.bit_offset, d.K)) == 0)
            done_at[b] = it + 1;
        }
      });
    }
  }
  for (int b = 0; b < nblocks; ++b) r.iterations[b] = done_at[b] ? done_at[b] : o.iterations;
}

template <typename T>
using TraitsFor = std::conditional_t<std::is_same_v<T, float>, FloatTraits, FixedTraits<T>>;

template <typename T>
DecodeResult decode_any(std::span<const int> K, std::span<const T> llr, const DecoderOptions& o) {
  check_options(o);
  const BatchPlan plan = make_plan(K, o.subdecoders, llr.size());
  check_llrs(plan, llr);
  if (!std::is_same_v<T, float> && o.algorithm == Algorithm::log_map)
    throw Error("turbo: log-map needs float LLRs (the fixed-point decoders are max-log-map)");
  DecodeResult r;
  r.backend = resolve(o.backend);
  if (r.backend == Backend::cuda) {
    if (o.algorithm != Algorithm::max_log_map)
      throw Error("turbo: the cuda backend decodes max-log-map only");
    CudaDecoder dec(o.device);
    dec.load(K, llr);
    r.seconds = dec.run(o);
    r.bits = dec.bits();
    r.llr = dec.llrs();
    r.iterations = dec.iterations();
    return r;
  }
  r.bits.assign(plan.total_bits, 0);
  if (o.output_llrs) r.llr.assign(plan.total_bits, 0.0f);
  r.iterations.assign(plan.blocks.size(), o.iterations);
  ThreadPool* pool = r.backend == Backend::cpu_parallel ? &ThreadPool::shared() : nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  if (o.algorithm == Algorithm::log_map) {
    if constexpr (std::is_same_v<T, float>)
      decode_cpu<FloatTraits, true>(plan, llr.data(), o, pool, r);
  } else {
    decode_cpu<TraitsFor<T>, false>(plan, llr.data(), o, pool, r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

DecodeResult decode(std::span<const int> K, std::span<const float> llr, const DecoderOptions& o) {
  return decode_any(K, llr, o);
}
DecodeResult decode(std::span<const int> K, std::span<const std::int16_t> llr,
                    const DecoderOptions& o) {
  return decode_any(K, llr, o);
}
DecodeResult decode(std::span<const int> K, std::span<const std::int8_t> llr,
                    const DecoderOptions& o) {
  return decode_any(K, llr, o);
}

}  // namespace sigpu::turbo
