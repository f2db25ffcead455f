// The CPU decoders (serial reference and multi-threaded parallel scheme) and the public decode()
// entry points, which dispatch to the CPU or the GPU.
#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/cpu_decoder.hpp"
#include "turbo/interframe.hpp"
#include "turbo/plan.hpp"
#include "turbo/saturating_decoder.hpp"

namespace sigpu::turbo {
namespace {

template <typename T>
using TraitsFor = std::conditional_t<std::is_same_v<T, float>, FloatTraits, FixedTraits<T>>;

template <typename T>
DecodeResult decode_any(std::span<const int> K, std::span<const T> llr, const DecoderOptions& o) {
  check_options(o);
  const BatchPlan plan = make_plan(K, o.subdecoders, llr.size());
  check_llrs(plan, llr);
  if (!std::is_same_v<T, float> && o.algorithm == Algorithm::log_map)
    throw Error("turbo: log-map needs float LLRs (the fixed-point decoders are max-log-map)");
  const bool saturating = saturating_metrics(std::is_same_v<T, float>          ? LlrType::f32
                                             : std::is_same_v<T, std::int16_t> ? LlrType::i16
                                                                               : LlrType::i8,
                                             o);
  DecodeResult r;
  r.backend = resolve(o.backend);
  if (r.backend == Backend::cuda) {
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
  } else if constexpr (std::is_same_v<T, float>) {
    decode_cpu<FloatTraits, false>(plan, llr.data(), o, pool, r);
  } else if (saturating) {
    if constexpr (std::is_same_v<T, std::int8_t>)
      if (!decode_interframe_saturating(plan, llr.data(), o, pool, r, interframe_isa()))
        decode_saturating(plan, llr.data(), o, pool, r);
  } else {
    // Whole blocks side by side in SIMD lanes where the CPU has them: the same output.
    if (o.subdecoders != 1 || !decode_interframe(plan, llr.data(), o, pool, r, interframe_isa()))
      decode_cpu<TraitsFor<T>, false>(plan, llr.data(), o, pool, r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

std::string cpu_decoder(LlrType t, const DecoderOptions& o) {
  DecoderOptions cpu = o;
  cpu.backend = Backend::cpu_parallel;
  const bool saturating = saturating_metrics(t, cpu);
  const std::string metrics = saturating ? ", 8-bit saturating metrics" : "";
  const Isa isa = interframe_isa();
  const int lanes = interframe_lanes(isa, t, saturating);
  if (o.subdecoders != 1 || o.algorithm == Algorithm::log_map || lanes == 0)
    return saturating ? "scalar (8-bit saturating metrics)" : "scalar";
  return "inter-frame " + std::string(to_string(isa)) + " (" + std::to_string(lanes) + " blocks " +
         std::string(to_string(t)) + metrics + ")";
}

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
