// The inter-frame SIMD decoder against its plain twin, the scalar decoder (decode_cpu): the same
// bits, a-posteriori LLRs and iterations for int8 and int16 LLRs, batches of mixed sizes that
// leave groups part full, early termination, and LLRs at the ends of their range.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"
#include "support/twin.hpp"

#include <random>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/cpu_decoder.hpp"
#include "turbo/interframe.hpp"

namespace sigpu::turbo {
namespace {

namespace twin = sigpu::test::twin;

DecodeResult sized(const BatchPlan& plan, const DecoderOptions& o) {
  DecodeResult r;
  r.bits.assign(plan.total_bits, 0);
  if (o.output_llrs) r.llr.assign(plan.total_bits, 0.0f);
  r.iterations.assign(plan.blocks.size(), o.iterations);
  return r;
}

template <typename T>
void expect_twin(const std::vector<int>& K, const std::vector<T>& llr, const DecoderOptions& o,
                 const std::string& at) {
  const BatchPlan plan = make_plan(K, 1, llr.size());
  DecodeResult want = sized(plan, o), got = sized(plan, o);
  decode_cpu<FixedTraits<T>, false>(plan, llr.data(), o, nullptr, want);
  if (!decode_interframe(plan, llr.data(), o, &ThreadPool::shared(), got))
    GTEST_SKIP() << "no AVX2 on this CPU";
  EXPECT_TRUE(twin::equal(want.bits, got.bits)) << "bits " << at;
  EXPECT_TRUE(twin::equal(want.llr, got.llr)) << "LLRs " << at;
  EXPECT_TRUE(twin::equal(want.iterations, got.iterations)) << "iterations " << at;
}

template <typename T>
std::vector<T> quantized(const std::vector<float>& llr, int frac_bits) {
  std::vector<T> q(llr.size());
  quantize(llr, frac_bits, std::span<T>(q));
  return q;
}

TEST(TurboInterframe, MatchesTheScalarDecoder) {
  // 21 blocks of 6144 (a full group of 16 and a part-full one), three other sizes.
  std::vector<int> K(21, 6144);
  for (int k : {40, 1056, 40, 512, 1056}) K.push_back(k);
  for (double ebn0 : {0.2, 0.8, 2.0}) {
    const auto f = sigpu::test::make_turbo_frames(K, ebn0, 11);
    for (bool llrs : {false, true}) {
      DecoderOptions o{.iterations = 6, .output_llrs = llrs};
      const std::string at = std::to_string(ebn0) + " dB" + (llrs ? " with LLRs" : "");
      expect_twin(f.K, quantized<std::int8_t>(f.llr, 2), o, "int8 " + at);
      expect_twin(f.K, quantized<std::int16_t>(f.llr, 6), o, "int16 " + at);
    }
  }
}

TEST(TurboInterframe, EarlyTerminationStopsEachBlockWhereTheScalarDecoderDoes) {
  const auto f = sigpu::test::make_turbo_transport_block(100000, 0.9, 5);
  for (int min_it : {1, 3}) {
    DecoderOptions o{.iterations = 8, .early_termination = true, .min_iterations = min_it};
    expect_twin(f.K, quantized<std::int8_t>(f.llr, 2), o, "int8 min " + std::to_string(min_it));
    expect_twin(f.K, quantized<std::int16_t>(f.llr, 6), o, "int16 min " + std::to_string(min_it));
  }
}

TEST(TurboInterframe, LlrsAtTheEndsOfTheirRange) {
  std::mt19937 rng(3);
  const std::vector<int> K(17, 2048);
  const std::size_t n = llr_count(2048) * K.size();
  DecoderOptions o{.iterations = 4, .output_llrs = true};
  expect_twin(K, sigpu::test::random_values<std::int8_t>(n, rng, -128, 127), o, "int8");
  expect_twin(K, sigpu::test::random_values<std::int16_t>(n, rng, -32768, 32767), o, "int16");
  std::vector<std::int8_t> extreme(n);
  for (auto& x : extreme) x = (rng() & 1) ? 127 : -128;
  expect_twin(K, extreme, o, "int8 +127 / -128 only");
}

}  // namespace
}  // namespace sigpu::turbo
