// Rate matching (36.212 5.1.4.1) against a bit-serial transcription of the spec's text written
// here: the sub-block interleaver matrix filled row by row and read column by column, <NULL>
// bits marked, the circular buffer walked one bit at a time. Then N_cb and E, HARQ combining,
// and a round trip through the encoder, two redundancy versions and the CPU decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <sigpu/turbo.hpp>

#include "support/turbo_frames.hpp"

namespace turbo = sigpu::turbo;

namespace {

constexpr int kNullBit = -1;

// The circular buffer w of a code block as 5.1.4.1 builds it: each entry is the index of its
// bit in d0 | d1 | d2 (each K + 4 long), or kNullBit for a dummy or filler bit.
struct SpecBuffer {
  int R = 0;
  std::vector<int> w;
};

SpecBuffer spec_circular_buffer(int K, int F) {
  constexpr int C = 32;
  // Table 5.1.4-1.
  constexpr int P[C] = {0, 16, 8, 24, 4, 20, 12, 28, 2, 18, 10, 26, 6, 22, 14, 30,
                        1, 17, 9, 25, 5, 21, 13, 29, 3, 19, 11, 27, 7, 23, 15, 31};
  const int D = K + 4;
  SpecBuffer b;
  while (D > b.R * C) ++b.R;
  const int R = b.R, K_pi = R * C, N_D = K_pi - D;
  std::vector<std::vector<int>> v(3);
  for (int i = 0; i < 3; ++i) {
    // y: N_D dummy bits, then d^(i); the first F bits of d^(0) and d^(1) are filler <NULL>s.
    std::vector<int> y(N_D, kNullBit);
    for (int k = 0; k < D; ++k) y.push_back(i < 2 && k < F ? kNullBit : i * D + k);
    if (i < 2) {
      std::vector<std::vector<int>> matrix(R, std::vector<int>(C));
      for (int row = 0; row < R; ++row)
        for (int col = 0; col < C; ++col) matrix[row][col] = y[row * C + col];
      for (int j = 0; j < C; ++j)  // permuted column j is original column P(j)
        for (int row = 0; row < R; ++row) v[i].push_back(matrix[row][P[j]]);
    } else {
      for (int k = 0; k < K_pi; ++k) v[i].push_back(y[(P[k / R] + C * (k % R) + 1) % K_pi]);
    }
  }
  b.w = v[0];
  for (int k = 0; k < K_pi; ++k) {
    b.w.push_back(v[1][k]);
    b.w.push_back(v[2][k]);
  }
  return b;
}

// The positions of w that the E bits of rv come from, in order (the spec's while loop).
std::vector<int> spec_selection(const SpecBuffer& b, int N_cb, int rv, int E) {
  const int k0 = b.R * (2 * static_cast<int>(std::ceil(double(N_cb) / (8.0 * b.R))) * rv + 2);
  std::vector<int> pos;
  int k = 0, j = 0;
  while (k < E) {
    if (b.w[(k0 + j) % N_cb] != kNullBit) {
      pos.push_back((k0 + j) % N_cb);
      k = k + 1;
    }
    j = j + 1;
  }
  return pos;
}

int filler_for(int index) {
  return index % 3 == 0 ? index % 40 : 0;  // every third size gets 0..39 filler bits
}

}  // namespace

TEST(TurboRateMatch, EveryBlockSizeMatchesSpec) {
  std::mt19937 rng(27);
  const auto sizes = turbo::block_sizes();
  for (int idx = 0; idx < turbo::kNumBlockSizes; ++idx) {
    const int K = sizes[idx], F = filler_for(idx);
    const SpecBuffer b = spec_circular_buffer(K, F);
    const int K_w = static_cast<int>(b.w.size());
    ASSERT_EQ(turbo::circular_buffer_length(K), K_w);
    const auto d = sigpu::test::random_values<std::uint8_t>(turbo::llr_count(K), rng, 0, 1);
    for (int N_cb : {K_w, K_w / 3, (2 * K_w) / 3 + 5}) {
      const int valid = static_cast<int>(
          std::count_if(b.w.begin(), b.w.begin() + N_cb, [](int x) { return x != kNullBit; }));
      for (int E : {1, K / 2 + 3, valid, K_w, 2 * K_w + 7}) {
        for (int rv = 0; rv < 4; ++rv) {
          SCOPED_TRACE("K " + std::to_string(K) + " F " + std::to_string(F) + " N_cb " +
                       std::to_string(N_cb) + " E " + std::to_string(E) + " rv " +
                       std::to_string(rv));
          const turbo::RateMatchParams p{.K = K, .F = F, .E = E, .rv = rv, .N_cb = N_cb};
          const auto pos = spec_selection(b, N_cb, rv, E);
          std::vector<std::uint8_t> want;
          for (int j : pos) want.push_back(d[b.w[j]]);
          ASSERT_EQ(turbo::rate_match(d, p), want);

          // Receive side: every LLR summed (saturating) into its position.
          const auto llr = sigpu::test::random_values<std::int8_t>(E, rng, -90, 90);
          std::vector<std::int8_t> buf(N_cb), want_buf(N_cb);
          for (int k = 0; k < E; ++k)
            want_buf[pos[k]] = static_cast<std::int8_t>(
                std::clamp(int(want_buf[pos[k]]) + int(llr[k]), -127, 127));
          turbo::de_rate_match(std::span<const std::int8_t>(llr), p, std::span(buf));
          ASSERT_EQ(buf, want_buf);
        }
      }
    }
  }
}

TEST(TurboRateMatch, SoftBufferToStreamsMatchesSpec) {
  std::mt19937 rng(5);
  const auto sizes = turbo::block_sizes();
  for (int idx = 0; idx < turbo::kNumBlockSizes; idx += 7) {
    const int K = sizes[idx], F = filler_for(idx) + (idx % 2);
    const SpecBuffer b = spec_circular_buffer(K, F);
    const int K_w = static_cast<int>(b.w.size());
    for (int N_cb : {K_w, (3 * K_w) / 4}) {
      SCOPED_TRACE("K " + std::to_string(K) + " F " + std::to_string(F) + " N_cb " +
                   std::to_string(N_cb));
      const turbo::RateMatchParams p{.K = K, .F = F, .N_cb = N_cb};
      ASSERT_EQ(turbo::soft_buffer_entries(p), N_cb);
      const auto buf = sigpu::test::random_values<float>(N_cb, rng, -50, 50);
      std::vector<float> want(turbo::llr_count(K), 0.0f);
      const int D = K + 4;
      for (int f = 0; f < F; ++f) want[f] = want[D + f] = 99.0f;
      for (int j = 0; j < N_cb; ++j)
        if (b.w[j] != kNullBit) want[b.w[j]] = buf[j];
      std::vector<float> got(turbo::llr_count(K), -1.0f);
      turbo::soft_buffer_to_llrs(std::span<const float>(buf), p, std::span(got), 99.0f);
      ASSERT_EQ(got, want);
    }
  }
}

TEST(TurboRateMatch, SoftBufferSizeAndE) {
  // K = 6144: K_w = 3 * 32 * 193. Category 1 (N_soft = 250368), 8 HARQ processes.
  EXPECT_EQ(turbo::circular_buffer_length(6144), 18528);
  EXPECT_EQ(turbo::circular_buffer_length(40), 3 * 32 * 2);
  EXPECT_EQ(turbo::soft_buffer_size(6144, 1, {.N_soft = 250368}), 18528);
  EXPECT_EQ(turbo::soft_buffer_size(6144, 2, {.N_soft = 250368}), 15648);
  EXPECT_EQ(turbo::soft_buffer_size(6144, 1, {.N_soft = 250368, .K_MIMO = 2}), 15648);
  EXPECT_EQ(turbo::soft_buffer_size(6144, 1, {.N_soft = 250368, .K_MIMO = 2, .M_DL_HARQ = 15}),
            15648);  // M_limit = 8
  EXPECT_EQ(turbo::soft_buffer_size(6144, 3, {.N_soft = 250368, .M_DL_HARQ = 4}), 18528);
  EXPECT_EQ(turbo::soft_buffer_size(6144, 3, {.N_soft = 250368, .K_C = 2, .M_DL_HARQ = 4}), 10432);

  // G' = 500 symbols over C = 3: gamma = 2, so block 0 gets floor(500/3), the rest ceil.
  EXPECT_EQ(turbo::code_block_E(1000, 1, 2, 3, 0), 332);
  EXPECT_EQ(turbo::code_block_E(1000, 1, 2, 3, 1), 334);
  EXPECT_EQ(turbo::code_block_E(1000, 1, 2, 3, 2), 334);
  for (int C : {1, 2, 5, 13}) {
    for (std::int64_t G : {std::int64_t(24 * 7), std::int64_t(24 * 1001)}) {
      std::int64_t sum = 0;
      for (int r = 0; r < C; ++r) sum += turbo::code_block_E(G, 2, 6, C, r);
      EXPECT_EQ(sum, G) << "C " << C << " G " << G;
    }
  }
  EXPECT_THROW(turbo::code_block_E(1001, 1, 2, 3, 0), sigpu::Error);
  EXPECT_THROW(turbo::code_block_E(1000, 1, 2, 3, 3), sigpu::Error);

  const std::vector<std::uint8_t> d(turbo::llr_count(40));
  EXPECT_THROW(turbo::rate_match(d, {.K = 40, .E = 10, .rv = 4}), sigpu::Error);
  EXPECT_THROW(turbo::rate_match(d, {.K = 41, .E = 10}), sigpu::Error);
  EXPECT_THROW(turbo::rate_match(d, {.K = 40, .F = 40, .E = 10}), sigpu::Error);
  EXPECT_THROW(turbo::rate_match(d, {.K = 40, .E = 10, .N_cb = 63}), sigpu::Error);
  EXPECT_THROW(turbo::rate_match(d, {.K = 40, .E = 10, .N_cb = 193}), sigpu::Error);
  EXPECT_THROW(turbo::rate_match(std::span(d).first(10), {.K = 40, .E = 10}), sigpu::Error);
  std::vector<float> buf(191), llr(10);
  EXPECT_THROW(turbo::de_rate_match(std::span<const float>(llr), {.K = 40, .E = 10}, buf),
               sigpu::Error);  // the buffer needs 192
  buf.resize(192);
  EXPECT_THROW(turbo::de_rate_match(std::span<const float>(llr), {.K = 40, .E = 11}, buf),
               sigpu::Error);
}

TEST(TurboRateMatch, HarqCombiningSums) {
  std::mt19937 rng(3);
  const int K = 1024;
  const turbo::RateMatchParams p{.K = K, .E = 4000, .rv = 0};  // E > K_w: repeats too
  const auto full8 = sigpu::test::random_values<std::int8_t>(p.E, rng, -60, 60);
  std::vector<std::int8_t> half8(p.E);
  std::vector<float> full(p.E), half(p.E);
  for (int k = 0; k < p.E; ++k) {
    half8[k] = static_cast<std::int8_t>(full8[k] / 2);
    half[k] = float(half8[k]) * 0.5f;  // exact in float
    full[k] = half[k] * 2.0f;
  }
  // Chase combining: two rv 0 transmissions at half amplitude give one at full amplitude.
  const int n = turbo::soft_buffer_entries(p);
  std::vector<float> once(n), twice(n);
  turbo::de_rate_match(std::span<const float>(full), p, std::span(once));
  turbo::de_rate_match(std::span<const float>(half), p, std::span(twice));
  turbo::de_rate_match(std::span<const float>(half), p, std::span(twice));
  EXPECT_EQ(once, twice);

  std::vector<std::int8_t> once8(n), twice8(n);
  std::vector<std::int8_t> doubled(p.E);
  for (int k = 0; k < p.E; ++k) doubled[k] = static_cast<std::int8_t>(2 * half8[k]);
  turbo::de_rate_match(std::span<const std::int8_t>(doubled), p, std::span(once8));
  turbo::de_rate_match(std::span<const std::int8_t>(half8), p, std::span(twice8));
  turbo::de_rate_match(std::span<const std::int8_t>(half8), p, std::span(twice8));
  EXPECT_EQ(once8, twice8);

  // Saturation: 100 + 100 stays at 127, -100 - 100 at -127.
  std::vector<std::int8_t> big(p.E, 100), neg(p.E, -100), s8(n), n8(n);
  turbo::de_rate_match(std::span<const std::int8_t>(big), p, std::span(s8));
  turbo::de_rate_match(std::span<const std::int8_t>(big), p, std::span(s8));
  turbo::de_rate_match(std::span<const std::int8_t>(neg), p, std::span(n8));
  turbo::de_rate_match(std::span<const std::int8_t>(neg), p, std::span(n8));
  EXPECT_EQ(*std::max_element(s8.begin(), s8.end()), 127);
  EXPECT_EQ(*std::min_element(n8.begin(), n8.end()), -127);
  std::vector<std::int16_t> s16(n), big16(p.E, 20000);
  turbo::de_rate_match(std::span<const std::int16_t>(big16), p, std::span(s16));
  turbo::de_rate_match(std::span<const std::int16_t>(big16), p, std::span(s16));
  EXPECT_EQ(*std::max_element(s16.begin(), s16.end()), 32767);
}

// Encoder -> rate matching (rv 0, then rv 2) -> noiseless LLRs -> combining -> CPU decoder.
TEST(TurboRateMatch, RoundTripThroughDecoder) {
  std::mt19937 rng(11);
  struct Case {
    int K, F, E, N_cb;
  };
  // E below K (punctured, code rate > 1 per transmission), near K_w, above it (repetition);
  // filler bits; a limited soft buffer.
  const Case cases[] = {{40, 0, 36, 0},      {40, 8, 300, 0},    {1008, 0, 900, 0},
                        {1008, 24, 1500, 0}, {6144, 0, 7000, 0}, {6144, 0, 9000, 12000},
                        {6144, 40, 20000, 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE("K " + std::to_string(c.K) + " F " + std::to_string(c.F) + " E " +
                 std::to_string(c.E) + " N_cb " + std::to_string(c.N_cb));
    auto bits = sigpu::test::random_values<std::uint8_t>(c.K, rng, 0, 1);
    std::fill(bits.begin(), bits.begin() + c.F, 0);  // filler bits are encoded as zeros
    const auto cw = turbo::encode(bits);
    turbo::RateMatchParams p{.K = c.K, .F = c.F, .E = c.E, .N_cb = c.N_cb};
    const int n = turbo::soft_buffer_entries(p);
    std::vector<float> buf(n);
    std::vector<std::int8_t> buf8(n);
    for (int rv : {0, 2}) {
      p.rv = rv;
      const auto e = turbo::rate_match(cw.d, p);
      std::vector<float> llr(e.size());
      std::vector<std::int8_t> llr8(e.size());
      for (std::size_t k = 0; k < e.size(); ++k) {
        llr[k] = e[k] ? -2.0f : 2.0f;
        llr8[k] = static_cast<std::int8_t>(e[k] ? -8 : 8);
      }
      turbo::de_rate_match(std::span<const float>(llr), p, std::span(buf));
      turbo::de_rate_match(std::span<const std::int8_t>(llr8), p, std::span(buf8));
    }
    std::vector<float> d(turbo::llr_count(c.K));
    std::vector<std::int8_t> d8(d.size());
    turbo::soft_buffer_to_llrs(std::span<const float>(buf), p, std::span(d), 20.0f);
    turbo::soft_buffer_to_llrs(std::span<const std::int8_t>(buf8), p, std::span(d8),
                               std::int8_t{127});
    const std::vector<int> K{c.K};
    const turbo::DecoderOptions o{.backend = sigpu::Backend::cpu};
    EXPECT_EQ(turbo::decode(K, d, o).bits, bits);
    EXPECT_EQ(turbo::decode(K, d8, o).bits, bits);
  }
}
