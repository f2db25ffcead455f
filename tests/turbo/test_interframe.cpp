// The inter-frame SIMD decoder in each instruction set against its plain twins, the scalar
// decoder (decode_cpu) and, in saturating 8-bit lanes, the saturating scalar decoder
// (decode_saturating): the same bits, a-posteriori LLRs and iterations for int8 and int16 LLRs,
// batches of mixed sizes that leave groups part full, more blocks of one size than one group
// holds, early termination, and LLRs at the ends of their range. An instruction set the CPU
// lacks is skipped, by name.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"
#include "support/twin.hpp"

#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/cpu_decoder.hpp"
#include "turbo/interframe.hpp"
#include "turbo/saturating_decoder.hpp"

namespace sigpu::turbo {

// The parameter's name in the test names gtest and CTest show.
void PrintTo(Isa isa, std::ostream* os) {
  *os << to_string(isa);
}

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
std::vector<T> quantized(const std::vector<float>& llr, int frac_bits) {
  std::vector<T> q(llr.size());
  quantize(llr, frac_bits, std::span<T>(q));
  return q;
}

class TurboInterframe : public testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!cpu_supports(GetParam()))
      GTEST_SKIP() << to_string(GetParam()) << ": this CPU (or this build) lacks it, not checked";
  }

  template <typename T>
  void expect_twin(const std::vector<int>& K, const std::vector<T>& llr, const DecoderOptions& o,
                   const std::string& at) {
    const BatchPlan plan = make_plan(K, 1, llr.size());
    DecodeResult want = sized(plan, o), got = sized(plan, o);
    decode_cpu<FixedTraits<T>, false>(plan, llr.data(), o, nullptr, want);
    ASSERT_TRUE(decode_interframe(plan, llr.data(), o, &ThreadPool::shared(), got, GetParam()));
    EXPECT_TRUE(twin::equal(want.bits, got.bits)) << "bits " << at;
    EXPECT_TRUE(twin::equal(want.llr, got.llr)) << "LLRs " << at;
    EXPECT_TRUE(twin::equal(want.iterations, got.iterations)) << "iterations " << at;
    if constexpr (std::is_same_v<T, std::int8_t>) {
      DecodeResult want8 = sized(plan, o), got8 = sized(plan, o);
      decode_saturating(plan, llr.data(), o, nullptr, want8);
      ASSERT_TRUE(decode_interframe_saturating(plan, llr.data(), o, &ThreadPool::shared(), got8,
                                               GetParam()));
      EXPECT_TRUE(twin::equal(want8.bits, got8.bits)) << "bits, 8-bit lanes, " << at;
      EXPECT_TRUE(twin::equal(want8.llr, got8.llr)) << "LLRs, 8-bit lanes, " << at;
      EXPECT_TRUE(twin::equal(want8.iterations, got8.iterations))
          << "iterations, 8-bit lanes, " << at;
    }
  }

  // Frames of sizes K over AWGN at ebn0, as int8 and int16 LLRs, with and without the LLR output.
  void expect_twins(const std::vector<int>& K, double ebn0, int iterations) {
    const auto f = sigpu::test::make_turbo_frames(K, ebn0, 11);
    for (bool llrs : {false, true}) {
      DecoderOptions o{.iterations = iterations, .output_llrs = llrs};
      const std::string at = std::to_string(K.size()) + " blocks, " + std::to_string(ebn0) + " dB" +
                             (llrs ? " with LLRs" : "");
      expect_twin(f.K, quantized<std::int8_t>(f.llr, 2), o, "int8 " + at);
      expect_twin(f.K, quantized<std::int16_t>(f.llr, 6), o, "int16 " + at);
    }
  }
};

TEST_P(TurboInterframe, MatchesTheScalarDecoder) {
  // 21 blocks of 6144 (a full AVX2 group and a part-full one), three other sizes.
  std::vector<int> K(21, 6144);
  for (int k : {40, 1056, 40, 512, 1056}) K.push_back(k);
  for (double ebn0 : {0.2, 0.8, 2.0}) expect_twins(K, ebn0, 6);
}

TEST_P(TurboInterframe, MoreBlocksOfOneSizeThanAGroupHolds) {
  // 70 blocks of one size (one full AVX-512 group of 8-bit lanes and part of another), then 70
  // of two sizes taken in turn, so that a group's blocks are not neighbours in the batch.
  expect_twins(std::vector<int>(70, 1024), 0.8, 4);
  std::vector<int> K;
  for (int i = 0; i < 70; ++i) K.push_back(i % 3 ? 512 : 2048);
  expect_twins(K, 0.8, 4);
}

TEST_P(TurboInterframe, EarlyTerminationStopsEachBlockWhereTheScalarDecoderDoes) {
  const auto f = sigpu::test::make_turbo_transport_block(100000, 0.9, 5);
  for (int min_it : {1, 3}) {
    DecoderOptions o{.iterations = 8, .early_termination = true, .min_iterations = min_it};
    expect_twin(f.K, quantized<std::int8_t>(f.llr, 2), o, "int8 min " + std::to_string(min_it));
    expect_twin(f.K, quantized<std::int16_t>(f.llr, 6), o, "int16 min " + std::to_string(min_it));
  }
}

TEST_P(TurboInterframe, LlrsAtTheEndsOfTheirRange) {
  std::mt19937 rng(3);
  const std::vector<int> K(65, 2048);
  const std::size_t n = llr_count(2048) * K.size();
  DecoderOptions o{.iterations = 4, .output_llrs = true};
  expect_twin(K, sigpu::test::random_values<std::int8_t>(n, rng, -128, 127), o, "int8");
  expect_twin(K, sigpu::test::random_values<std::int16_t>(n, rng, -32768, 32767), o, "int16");
  std::vector<std::int8_t> extreme(n);
  for (auto& x : extreme) x = (rng() & 1) ? 127 : -128;
  expect_twin(K, extreme, o, "int8 +127 / -128 only");
}

INSTANTIATE_TEST_SUITE_P(, TurboInterframe, testing::Values(Isa::avx2, Isa::avx512),
                         [](const testing::TestParamInfo<Isa>& i) {
                           return std::string(to_string(i.param));
                         });

// What decode() runs: the instruction set chosen once (the widest, or SIGPU_TURBO_ISA), named by
// cpu_decoder(); int8 LLRs in saturating 8-bit metrics unless exact ones are asked for, each
// giving its scalar twin's output; the scalar "instruction set" decodes nothing itself.
TEST(TurboInterframeChoice, DecodeUsesTheChosenInstructionSetAndMetrics) {
  const Isa isa = interframe_isa();
  EXPECT_TRUE(cpu_supports(isa)) << to_string(isa);
  const DecoderOptions o{.backend = Backend::cpu_parallel, .iterations = 4};
  DecoderOptions exact = o;
  exact.int8_metrics = Int8Metrics::exact;
  const std::string simd = "inter-frame " + std::string(to_string(isa)) + " (";
  if (isa == Isa::scalar) {
    EXPECT_EQ(cpu_decoder(LlrType::i8, o), "scalar (8-bit saturating metrics)");
    EXPECT_EQ(cpu_decoder(LlrType::i8, exact), "scalar");
  } else {
    EXPECT_EQ(cpu_decoder(LlrType::i8, o),
              simd + std::to_string(interframe_lanes(isa, LlrType::i8, true)) +
                  " blocks int8, 8-bit saturating metrics)");
    EXPECT_EQ(cpu_decoder(LlrType::i8, exact),
              simd + std::to_string(interframe_lanes(isa, LlrType::i8)) + " blocks int8)");
    EXPECT_EQ(cpu_decoder(LlrType::i16, o),
              simd + std::to_string(interframe_lanes(isa, LlrType::i16)) + " blocks int16)");
  }
  EXPECT_EQ(cpu_decoder(LlrType::f32, o), "scalar");
  DecoderOptions p4 = o;
  p4.subdecoders = 4;
  EXPECT_EQ(cpu_decoder(LlrType::i16, p4), "scalar");
  EXPECT_EQ(cpu_decoder(LlrType::i8, p4), "scalar");

  const std::vector<int> K(5, 1056);
  const auto f = sigpu::test::make_turbo_frames(K, 0.8, 2);
  const auto llr = quantized<std::int8_t>(f.llr, 2);
  const BatchPlan plan = make_plan(K, 1, llr.size());
  DecodeResult want = sized(plan, o), want8 = sized(plan, o), unused = sized(plan, o);
  decode_cpu<FixedTraits<std::int8_t>, false>(plan, llr.data(), o, nullptr, want);
  decode_saturating(plan, llr.data(), o, nullptr, want8);
  const DecodeResult got = decode(K, std::span<const std::int8_t>(llr), exact);
  EXPECT_TRUE(twin::equal(want.bits, got.bits));
  EXPECT_TRUE(twin::equal(want.iterations, got.iterations));
  const DecodeResult got8 = decode(K, std::span<const std::int8_t>(llr), o);
  EXPECT_TRUE(twin::equal(want8.bits, got8.bits));
  EXPECT_FALSE(decode_interframe(plan, llr.data(), o, nullptr, unused, Isa::scalar));
  EXPECT_FALSE(decode_interframe_saturating(plan, llr.data(), o, nullptr, unused, Isa::scalar));

  // Asked for where it does not apply, saturating metrics are refused, naming why.
  DecoderOptions bad = p4;
  bad.int8_metrics = Int8Metrics::saturating;
  EXPECT_THROW(decode(K, std::span<const std::int8_t>(llr), bad), UnsupportedError);
  bad = o;
  bad.int8_metrics = Int8Metrics::saturating;
  bad.algorithm = Algorithm::log_map;
  EXPECT_THROW(cpu_decoder(LlrType::i8, bad), UnsupportedError);
  // And for LLRs that are not int8.
  bad = o;
  bad.int8_metrics = Int8Metrics::saturating;
  const std::vector<std::int16_t> wide(llr.begin(), llr.end());
  EXPECT_THROW(decode(K, std::span<const std::int16_t>(wide), bad), UnsupportedError);
  EXPECT_THROW(cpu_decoder(LlrType::i16, bad), UnsupportedError);
  EXPECT_EQ(cpu_decoder(LlrType::i16, o).find("saturating"), std::string::npos);
}

// Saturating 8-bit metrics decode: at 1.5 dB, where the serial decoder's FER is far below 1e-3,
// every frame comes back as sent (the error rate against the exact decoders is bench's check).
TEST(TurboSaturating, DecodesFramesAtAHighSnrAsSent) {
  const std::vector<int> K(12, 6144);
  const auto f = sigpu::test::make_turbo_frames(K, 1.5, 4);
  const auto llr = quantized<std::int8_t>(f.llr, 2);
  const BatchPlan plan = make_plan(K, 1, llr.size());
  const DecoderOptions o{.iterations = 6};
  DecodeResult r = sized(plan, o);
  decode_saturating(plan, llr.data(), o, &ThreadPool::shared(), r);
  EXPECT_TRUE(twin::equal(f.info, r.bits));
}

}  // namespace
}  // namespace sigpu::turbo
