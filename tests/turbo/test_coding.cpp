// Encoder chain: QPP table, encoder against an independent bit-serial encoder written from the
// shift registers of 36.212 Figure 5.1.3-2, CRC24A/B, segmentation round trips, channel noise.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/philox.hpp"
#include "turbo/plan.hpp"

namespace turbo = sigpu::turbo;

namespace {

std::vector<std::uint8_t> random_bits(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng() & 1u);
  return v;
}

// One constituent encoder as drawn in the spec: three delay cells D1 D2 D3, feedback taps
// g0 = 1 + D^2 + D^3, output taps g1 = 1 + D + D^3. Termination flips the switch: the input
// becomes the feedback, so the adder at the register input sees zero.
struct SpecRsc {
  std::array<int, 4> d{};  // d[1..3] are the cells
  static constexpr std::array<int, 4> g0{1, 0, 1, 1};
  static constexpr std::array<int, 4> g1{1, 1, 0, 1};
  int feedback() const {
    int f = 0;
    for (int i = 1; i <= 3; ++i) f ^= g0[i] & d[i];
    return f;
  }
  int clock(int input) {  // returns the parity output z
    const int w = input ^ feedback();
    int z = g1[0] & w;
    for (int i = 1; i <= 3; ++i) z ^= g1[i] & d[i];
    d[3] = d[2];
    d[2] = d[1];
    d[1] = w;
    return z;
  }
};

std::vector<std::uint8_t> spec_encode(const std::vector<std::uint8_t>& c) {
  const int K = static_cast<int>(c.size());
  const auto [f1, f2] = turbo::qpp_coefficients(K);
  std::vector<int> x(K + 3), z(K + 3), xp(K + 3), zp(K + 3);
  SpecRsc e1, e2;
  for (int k = 0; k < K; ++k) {
    const std::int64_t i = k;
    const int pik = static_cast<int>((f1 * i + f2 * i * i) % K);
    x[k] = c[k];
    z[k] = e1.clock(c[k]);
    xp[k] = c[pik];
    zp[k] = e2.clock(c[pik]);
  }
  for (int k = K; k < K + 3; ++k) {
    x[k] = e1.feedback();
    z[k] = e1.clock(x[k]);
    xp[k] = e2.feedback();
    zp[k] = e2.clock(xp[k]);
  }
  std::vector<std::uint8_t> d(3 * (K + 4));
  auto put = [&](int stream, int k, int v) {
    d[stream * (K + 4) + k] = static_cast<std::uint8_t>(v);
  };
  for (int k = 0; k < K; ++k) {
    put(0, k, x[k]);
    put(1, k, z[k]);
    put(2, k, zp[k]);
  }
  // 36.212 5.1.3.2.2
  put(0, K, x[K]);
  put(0, K + 1, z[K + 1]);
  put(0, K + 2, xp[K]);
  put(0, K + 3, zp[K + 1]);
  put(1, K, z[K]);
  put(1, K + 1, x[K + 2]);
  put(1, K + 2, zp[K]);
  put(1, K + 3, xp[K + 2]);
  put(2, K, x[K + 1]);
  put(2, K + 1, z[K + 2]);
  put(2, K + 2, xp[K + 1]);
  put(2, K + 3, zp[K + 2]);
  return d;
}

// CRC by polynomial long division over the message followed by 24 zeros.
std::uint32_t crc_by_division(const std::vector<std::uint8_t>& m, std::uint32_t poly) {
  std::vector<std::uint8_t> r(m);
  r.resize(m.size() + 24, 0);
  std::array<int, 25> g{};
  g[0] = 1;
  for (int i = 0; i < 24; ++i) g[24 - i] = (poly >> i) & 1;  // g[0] is D^24
  for (std::size_t i = 0; i < m.size(); ++i)
    if (r[i])
      for (int j = 0; j <= 24; ++j) r[i + j] ^= static_cast<std::uint8_t>(g[j]);
  std::uint32_t crc = 0;
  for (int i = 0; i < 24; ++i) crc = (crc << 1) | r[m.size() + i];
  return crc;
}

}  // namespace

TEST(TurboQpp, EveryTableRowIsAPermutation) {
  const auto sizes = turbo::block_sizes();
  ASSERT_EQ(sizes.size(), 188u);
  EXPECT_EQ(sizes.front(), 40);
  EXPECT_EQ(sizes.back(), 6144);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const int K = sizes[i];
    EXPECT_EQ(turbo::block_size_index(K), static_cast<int>(i));
    const auto pi = turbo::qpp_interleaver(K);
    std::vector<bool> seen(K, false);
    const auto [f1, f2] = turbo::qpp_coefficients(K);
    for (int j = 0; j < K; ++j) {
      ASSERT_LT(pi[j], K);
      EXPECT_FALSE(seen[pi[j]]) << "K = " << K << " repeats " << pi[j];
      seen[pi[j]] = true;
      const std::int64_t x = j;
      ASSERT_EQ(pi[j], (f1 * x + f2 * x * x) % K) << "K = " << K << " i = " << j;
    }
  }
  EXPECT_EQ(turbo::qpp_coefficients(40), std::make_pair(3, 10));
  EXPECT_EQ(turbo::qpp_coefficients(1504), std::make_pair(49, 846));
  EXPECT_EQ(turbo::qpp_coefficients(6144), std::make_pair(263, 480));
}

TEST(TurboQpp, InvalidSizesAreRefused) {
  for (int K : {0, 39, 41, 520, 6145, 6208, -40}) {
    EXPECT_FALSE(turbo::valid_block_size(K));
    try {
      turbo::qpp_interleaver(K);
      FAIL() << K;
    } catch (const sigpu::Error& e) {
      EXPECT_NE(std::string(e.what()).find("K = " + std::to_string(K)), std::string::npos)
          << e.what();
    }
  }
}

TEST(TurboEncoder, MatchesBitSerialSpecEncoder) {
  const auto sizes = turbo::block_sizes();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto c = random_bits(sizes[i], static_cast<std::uint32_t>(i));
    const auto cw = turbo::encode(c);
    ASSERT_EQ(cw.d, spec_encode(c)) << "K = " << sizes[i];
  }
}

TEST(TurboEncoder, AllZeroInputGivesAllZeroCodeword) {
  std::vector<std::uint8_t> c(6144, 0);
  const auto cw = turbo::encode(c);
  for (auto b : cw.d) ASSERT_EQ(b, 0);
}

TEST(TurboCrc, MatchesPolynomialDivision) {
  for (std::uint32_t seed = 0; seed < 20; ++seed) {
    const auto m = random_bits(1 + seed * 37, seed);
    EXPECT_EQ(turbo::crc24a(m), crc_by_division(m, 0x864CFB));
    EXPECT_EQ(turbo::crc24b(m), crc_by_division(m, 0x800063));
  }
}

// The GPU's early termination checks CRC24B or CRC24A as an XOR of per-position weights
// (linearity).
TEST(TurboCrc, WeightsSumToTheCrc) {
  const auto wb = turbo::crc24_weights(turbo::kMaxK, turbo::BlockCrc::crc24b);
  const auto wa = turbo::crc24_weights(turbo::kMaxK, turbo::BlockCrc::crc24a);
  for (std::uint32_t seed = 0; seed < 20; ++seed) {
    const auto m = random_bits(40 + seed * 301, seed);
    std::uint32_t rb = 0, ra = 0;
    for (std::size_t k = 0; k < m.size(); ++k)
      if (m[k]) {
        rb ^= wb[m.size() - 1 - k];
        ra ^= wa[m.size() - 1 - k];
      }
    EXPECT_EQ(rb, crc_by_division(m, 0x800063)) << m.size() << " bits";
    EXPECT_EQ(ra, crc_by_division(m, 0x864CFB)) << m.size() << " bits";
  }
}

TEST(TurboSegmentation, KnownPlans) {
  auto s = turbo::plan_segmentation(6120);  // B = 6144: one block, no filler
  EXPECT_EQ(s.C, 1);
  EXPECT_EQ(s.K_plus, 6144);
  EXPECT_EQ(s.F, 0);
  s = turbo::plan_segmentation(6121);  // B = 6145, B' = 6193
  EXPECT_EQ(s.C, 2);
  EXPECT_EQ(s.K_plus, 3136);
  EXPECT_EQ(s.K_minus, 3072);
  EXPECT_EQ(s.C_minus, 1);
  EXPECT_EQ(s.C_plus, 1);
  EXPECT_EQ(s.F, 15);
  s = turbo::plan_segmentation(16);  // B = 40
  EXPECT_EQ(s.C, 1);
  EXPECT_EQ(s.F, 0);
  EXPECT_THROW(turbo::plan_segmentation(0), sigpu::Error);
}

TEST(TurboSegmentation, RoundTripsFrom40To100000Bits) {
  std::vector<int> sizes;
  for (int A = 40; A <= 400; ++A) sizes.push_back(A);
  for (int A = 6100; A <= 6140; ++A) sizes.push_back(A);
  for (int A = 12200; A <= 12260; ++A) sizes.push_back(A);
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) sizes.push_back(40 + static_cast<int>(rng() % 99961));
  sizes.push_back(75376);
  sizes.push_back(100000);
  for (int A : sizes) {
    const auto plan = turbo::plan_segmentation(A);
    int sum = 0;
    for (int K : plan.K) {
      ASSERT_TRUE(turbo::valid_block_size(K)) << "A = " << A << " K = " << K;
      sum += K;
    }
    ASSERT_EQ(sum, plan.B + plan.C * plan.L + plan.F) << "A = " << A;
    ASSERT_GE(plan.F, 0);
    ASSERT_GE(plan.C_minus, 0);
    const auto tb = random_bits(A, static_cast<std::uint32_t>(A));
    auto cb = turbo::segment(tb, plan);
    ASSERT_EQ(cb.size(), static_cast<std::size_t>(sum));
    for (int f = 0; f < plan.F; ++f) ASSERT_EQ(cb[f], 0);
    auto d = turbo::desegment(cb, plan);
    ASSERT_TRUE(d.ok()) << "A = " << A;
    ASSERT_EQ(d.bits, tb) << "A = " << A;
    // A flipped bit is caught by CRC24B (several blocks) or CRC24A.
    cb[plan.F + (A * 7919u) % (sum - plan.F)] ^= 1;
    d = turbo::desegment(cb, plan);
    ASSERT_FALSE(d.ok()) << "A = " << A;
  }
  EXPECT_THROW(turbo::desegment(std::vector<std::uint8_t>(5), turbo::plan_segmentation(100)),
               sigpu::Error);
}

TEST(TurboChannel, PhiloxKnownAnswers) {
  auto r = turbo::philox4x32_10(turbo::Philox4{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(r.v[0], 0x6627e8d5u);
  EXPECT_EQ(r.v[1], 0xe169c58du);
  EXPECT_EQ(r.v[2], 0xbc57ac4cu);
  EXPECT_EQ(r.v[3], 0x9b00dbd8u);
  r = turbo::philox4x32_10(turbo::Philox4{{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u);
  EXPECT_EQ(r.v[0], 0x408f276du);
  EXPECT_EQ(r.v[1], 0x41c83b0eu);
  EXPECT_EQ(r.v[2], 0xa20bc7c6u);
  EXPECT_EQ(r.v[3], 0x6d5451fdu);
}

TEST(TurboChannel, NoiseHasUnitVarianceAndDependsOnlyOnSeedFramePosition) {
  double sum = 0, sum2 = 0;
  const int n = 200000;
  for (int j = 0; j < n; ++j) {
    const double g = turbo::channel_gaussian(42, 3, j);
    sum += g;
    sum2 += g * g;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum2 / n, 1.0, 0.02);
  EXPECT_EQ(turbo::channel_gaussian(42, 3, 1000), turbo::channel_gaussian(42, 3, 1000));
  EXPECT_NE(turbo::channel_gaussian(42, 3, 1000), turbo::channel_gaussian(42, 4, 1000));
  EXPECT_NE(turbo::channel_gaussian(42, 3, 1000), turbo::channel_gaussian(43, 3, 1000));

  const auto cw = turbo::encode(random_bits(1024, 1));
  std::vector<float> a(turbo::llr_count(1024)), b(a.size());
  turbo::awgn_llrs(cw, {.ebn0_db = 1.0, .seed = 5}, 9, a);
  turbo::awgn_llrs(cw, {.ebn0_db = 1.0, .seed = 5}, 9, b);
  EXPECT_EQ(a, b);
  // Without noise the sign carries the bit; check the hard-decision error rate is plausible.
  int errors = 0;
  for (std::size_t j = 0; j < a.size(); ++j) errors += (a[j] < 0) != (cw.d[j] == 1);
  EXPECT_GT(errors, 0);
  EXPECT_LT(errors, static_cast<int>(a.size()) / 4);
  EXPECT_THROW(turbo::awgn_llrs(cw, {}, 0, std::span<float>(a.data(), a.size() - 1)), sigpu::Error);
}

TEST(TurboChannel, Quantisation) {
  std::vector<float> llr{0.0f, 1.0f, -1.0f, 0.26f, 1000.0f, -1000.0f};
  std::vector<std::int16_t> q16(llr.size());
  std::vector<std::int8_t> q8(llr.size());
  turbo::quantize(llr, 4, q16);
  turbo::quantize(llr, 2, q8);
  EXPECT_EQ(q16, (std::vector<std::int16_t>{0, 16, -16, 4, 16000, -16000}));
  EXPECT_EQ(q8, (std::vector<std::int8_t>{0, 4, -4, 1, 127, -127}));
  llr[2] = std::nanf("");
  EXPECT_THROW(turbo::quantize(llr, 4, q16), sigpu::Error);
}
