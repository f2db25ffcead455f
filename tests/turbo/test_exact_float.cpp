// ExactFloatTraits (the GPU block kernel's arithmetic for fixed-point LLRs) against the int32
// fixed-point decoder, on the CPU, with the LLR magnitudes that push the metrics furthest.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/cpu_decoder.hpp"
#include "turbo/plan.hpp"

namespace turbo = sigpu::turbo;

namespace {

template <class Tr>
turbo::DecodeResult decode_with(const turbo::BatchPlan& plan,
                                const std::vector<typename Tr::Llr>& llr,
                                const turbo::DecoderOptions& o) {
  turbo::DecodeResult r;
  r.bits.assign(plan.total_bits, 0);
  r.llr.assign(plan.total_bits, 0.0f);
  r.iterations.assign(plan.blocks.size(), o.iterations);
  turbo::decode_cpu<Tr, false>(plan, llr.data(), o, &sigpu::ThreadPool::shared(), r);
  return r;
}

// LLRs of type T for the blocks K: saturated (+-max and the type's minimum), uniform over the
// whole range, and a real codeword at an amplitude that saturates most of its LLRs.
template <typename T>
std::vector<T> hard_llrs(const std::vector<int>& K, std::uint32_t seed) {
  const auto f = sigpu::test::make_turbo_frames(K, 3.0, seed);
  std::vector<T> q(f.llr.size());
  std::vector<float> loud(f.llr.size());
  for (std::size_t i = 0; i < loud.size(); ++i) loud[i] = f.llr[i] * 4096.0f;
  turbo::quantize(loud, 0, std::span<T>(q));
  std::mt19937 rng(seed);
  constexpr int lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::uniform_int_distribution<int> any(lo, hi), pick(0, 3);
  const std::size_t third = q.size() / 3;
  for (std::size_t i = 0; i < third; ++i) {
    const int v[] = {hi, -hi, lo, any(rng)};
    q[i] = static_cast<T>(v[pick(rng)]);
  }
  for (std::size_t i = third; i < 2 * third; ++i) q[i] = static_cast<T>(any(rng));
  return q;
}

template <typename T>
void expect_exact(const std::string& what) {
  const std::vector<int> K{6144, 6144, 40, 1056};
  const auto q = hard_llrs<T>(K, 11);
  const std::vector<float> as_float(q.begin(), q.end());
  for (int P : {1, 8, 768}) {
    const turbo::DecoderOptions o{.iterations = 4, .subdecoders = P, .output_llrs = true};
    const turbo::BatchPlan plan = turbo::make_plan(K, P, q.size());
    const auto fixed = decode_with<turbo::FixedTraits<T>>(plan, q, o);
    const auto exact = decode_with<turbo::ExactFloatTraits<T>>(plan, as_float, o);
    EXPECT_EQ(fixed.bits, exact.bits) << what << " P = " << P;
    EXPECT_EQ(fixed.llr, exact.llr) << what << " P = " << P;
  }
}

}  // namespace

TEST(TurboExactFloat, FixedPointDecodersAreExactInFloat) {
  expect_exact<std::int16_t>("int16");
  expect_exact<std::int8_t>("int8");
}
