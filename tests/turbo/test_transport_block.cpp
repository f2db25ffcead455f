// Transport blocks: segmentation (36.212 5.1.2) and E (5.1.4.1.2) against a transcription of
// the spec's text written here, encode -> decode round trips over noiseless and noisy channels,
// the CRC24A / CRC24B results, HARQ combining, and early termination with min and max
// iterations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;
using sigpu::Backend;

namespace {

constexpr int kNull = 2;  // a <NULL> filler bit in the spec's code blocks

// The 188 sizes of Table 5.1.3-3 from the table's own steps.
std::vector<int> spec_block_sizes() {
  std::vector<int> k;
  for (int K = 40; K <= 512; K += 8) k.push_back(K);
  for (int K = 528; K <= 1024; K += 16) k.push_back(K);
  for (int K = 1056; K <= 2048; K += 32) k.push_back(K);
  for (int K = 2112; K <= 6144; K += 64) k.push_back(K);
  return k;
}

// CRC parity bits p0..p23 by long division of the bits followed by 24 zeros (5.1.1); <NULL>
// counts as 0.
std::vector<int> spec_crc(const std::vector<int>& a, std::uint32_t poly) {
  std::vector<int> r(a.begin(), a.end());
  for (auto& x : r) x = x == kNull ? 0 : x;
  r.resize(a.size() + 24, 0);
  const std::uint32_t g = poly | (1u << 24);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!r[i]) continue;
    for (int j = 0; j <= 24; ++j) r[i + j] ^= (g >> (24 - j)) & 1u;
  }
  return std::vector<int>(r.end() - 24, r.end());
}

// 5.1.2 as written: B' and C, K+ and K-, C+ and C-, F, then the bit loop filling c_rk.
struct SpecSegments {
  int C = 0, F = 0;
  std::vector<int> K;
  std::vector<int> bits;  // the code blocks, concatenated, kNull for filler bits
};
SpecSegments spec_segment(const std::vector<int>& b) {
  const int Z = 6144, B = static_cast<int>(b.size());
  int L, C, Bp;
  if (B <= Z) {
    L = 0;
    C = 1;
    Bp = B;
  } else {
    L = 24;
    C = static_cast<int>(std::ceil(double(B) / (Z - L)));
    Bp = B + C * L;
  }
  const auto sizes = spec_block_sizes();
  int Kp = 0;
  for (int K : sizes)
    if (C * K >= Bp) {
      Kp = K;
      break;
    }
  int Km = 0, Cp, Cm;
  if (C == 1) {
    Cp = 1;
    Cm = 0;
  } else {
    for (int K : sizes)
      if (K < Kp) Km = K;
    const int dK = Kp - Km;
    Cm = (C * Kp - Bp) / dK;
    Cp = C - Cm;
  }
  SpecSegments s;
  s.C = C;
  s.F = Cp * Kp + Cm * Km - Bp;
  std::vector<std::vector<int>> c(C);
  for (int k = 0; k < s.F; ++k) c[0].push_back(kNull);
  int k = s.F, sidx = 0;
  for (int r = 0; r < C; ++r) {
    const int Kr = r < Cm ? Km : Kp;
    s.K.push_back(Kr);
    while (k < Kr - L) {
      c[r].push_back(b[sidx]);
      ++k;
      ++sidx;
    }
    if (L > 0) {
      const auto p = spec_crc(c[r], 0x800063);
      while (k < Kr) {
        c[r].push_back(p[k + L - Kr]);
        ++k;
      }
    }
    k = 0;
    s.bits.insert(s.bits.end(), c[r].begin(), c[r].end());
  }
  return s;
}

// E of code block r (5.1.4.1.2's text).
int spec_E(std::int64_t G, int N_L, int Q_m, int C, int r) {
  const std::int64_t Gp = G / (N_L * Q_m), gamma = Gp % C;
  if (r <= C - gamma - 1) return static_cast<int>(N_L * Q_m * (Gp / C));
  return static_cast<int>(N_L * Q_m * ((Gp + C - 1) / C));
}

std::vector<std::uint8_t> random_bits(int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) x = static_cast<std::uint8_t>(rng() & 1u);
  return v;
}

// BPSK over AWGN at Es/N0 = snr_db (sigma: noise per real dimension; 0 for noiseless) as LLRs.
std::vector<float> bpsk_llrs(const std::vector<std::uint8_t>& e, double snr_db,
                             std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<float> llr(e.size());
  if (!std::isfinite(snr_db)) {
    for (std::size_t i = 0; i < e.size(); ++i) llr[i] = e[i] ? -20.0f : 20.0f;
    return llr;
  }
  const double sigma = std::sqrt(0.5 * std::pow(10.0, -snr_db / 10.0));
  for (std::size_t i = 0; i < e.size(); ++i) {
    const double y = (e[i] ? -1.0 : 1.0) + sigma * n(rng);
    llr[i] = static_cast<float>(2.0 * y / (sigma * sigma));
  }
  return llr;
}

// G for a code rate of about `rate`, a multiple of N_L Q_m.
std::int64_t coded_bits(int A, double rate, int Q_m, int N_L = 1) {
  const std::int64_t per = std::int64_t(Q_m) * N_L;
  return std::max<std::int64_t>(per, std::llround((A + 24) / rate / per) * per);
}

constexpr double kNoiseless = INFINITY;

}  // namespace

// Segmentation: the plan's sizes and filler bits, and segment()'s bits (CRC24B included), equal
// the spec's loop for transport blocks of one block, of several, with and without filler bits.
TEST(TurboTransportBlock, SegmentationMatchesSpec) {
  for (int A : {16, 17, 100, 1000, 1001, 6119, 6120, 6121, 6200, 12216, 12217, 20000, 55000, 75376,
                100000}) {
    const auto tb = random_bits(A, static_cast<std::uint32_t>(A));
    std::vector<int> b(tb.begin(), tb.end());
    const auto crc = spec_crc(b, 0x864CFB);
    b.insert(b.end(), crc.begin(), crc.end());
    const SpecSegments want = spec_segment(b);
    const auto plan = turbo::plan_segmentation(A);
    ASSERT_EQ(plan.C, want.C) << "A = " << A;
    ASSERT_EQ(plan.F, want.F) << "A = " << A;
    ASSERT_EQ(plan.K, want.K) << "A = " << A;
    const auto got = turbo::segment(tb, plan);
    ASSERT_EQ(got.size(), want.bits.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], want.bits[i] == kNull ? 0 : want.bits[i]) << "A = " << A << " bit " << i;
  }
}

// E per code block, and the whole transmission: the spec's segmentation, the encoder and
// rate matching of each block with the spec's E, concatenated.
TEST(TurboTransportBlock, EncoderIsSegmentationThenRateMatching) {
  struct Case {
    int A;
    std::int64_t G;
    int Q_m, N_L, rv;
  };
  for (const Case& c : {Case{1001, 3000, 2, 1, 0}, Case{6200, 9000, 4, 1, 2},
                        Case{20000, 30006, 6, 1, 3}, Case{30000, 36000, 6, 2, 1}}) {
    const turbo::TransportBlockParams p{.A = c.A, .G = c.G, .Q_m = c.Q_m, .N_L = c.N_L, .rv = c.rv};
    const auto tb = random_bits(c.A, 7);
    const auto plan = turbo::plan_segmentation(c.A);
    const auto cbs = turbo::plan_transport_block(p);
    ASSERT_EQ(static_cast<int>(cbs.size()), plan.C);
    const auto blocks = turbo::segment(tb, plan);
    std::vector<std::uint8_t> want;
    std::size_t at = 0;
    for (int r = 0; r < plan.C; ++r) {
      const int E = spec_E(c.G, c.N_L, c.Q_m, plan.C, r);
      EXPECT_EQ(cbs[r].E, E) << "A = " << c.A << " r = " << r;
      const auto cw = turbo::encode(std::span<const std::uint8_t>(blocks.data() + at, plan.K[r]));
      const auto e =
          turbo::rate_match(cw.d, {.K = plan.K[r], .F = r == 0 ? plan.F : 0, .E = E, .rv = c.rv});
      want.insert(want.end(), e.begin(), e.end());
      at += plan.K[r];
    }
    EXPECT_EQ(static_cast<std::int64_t>(want.size()), c.G);
    EXPECT_EQ(turbo::encode_transport_block(tb, p), want) << "A = " << c.A;
  }
}

// Noiseless and noisy round trips, every LLR type, filler bits and several code blocks, every
// rv; the CRCs pass and the bits come back.
TEST(TurboTransportBlock, RoundTrips) {
  struct Case {
    int A, Q_m, rv;
    double rate, snr_db;
  };
  for (const Case& c : {Case{16, 2, 0, 0.5, kNoiseless}, Case{1001, 4, 1, 0.6, kNoiseless},
                        Case{6200, 6, 2, 0.5, kNoiseless}, Case{20000, 2, 3, 0.5, kNoiseless},
                        Case{1001, 2, 0, 0.5, 2.0}, Case{14000, 2, 0, 0.5, 2.0}}) {
    const turbo::TransportBlockParams p{
        .A = c.A, .G = coded_bits(c.A, c.rate, c.Q_m), .Q_m = c.Q_m, .rv = c.rv};
    const auto tb = random_bits(c.A, static_cast<std::uint32_t>(c.A + c.rv));
    const auto llr = bpsk_llrs(turbo::encode_transport_block(tb, p), c.snr_db, 3);
    const std::string at = "A = " + std::to_string(c.A) + " rv = " + std::to_string(c.rv);
    const turbo::DecoderOptions o{.backend = Backend::cpu_parallel, .iterations = 8};
    turbo::HarqBuffer<float> hf;
    const auto r = turbo::decode_transport_block(llr, p, hf, o);
    EXPECT_TRUE(r.ok()) << at;
    EXPECT_EQ(r.bits, tb) << at;
    EXPECT_EQ(r.crc24b_ok.size(), turbo::plan_segmentation(c.A).K.size());
    EXPECT_EQ(hf.transmissions, 1);

    std::vector<std::int16_t> q16(llr.size());
    std::vector<std::int8_t> q8(llr.size());
    turbo::quantize(llr, 3, std::span<std::int16_t>(q16));
    turbo::quantize(llr, 1, std::span<std::int8_t>(q8));
    turbo::HarqBuffer<std::int16_t> h16;
    turbo::HarqBuffer<std::int8_t> h8;
    const auto r16 = turbo::decode_transport_block(std::span<const std::int16_t>(q16), p, h16, o);
    const auto r8 = turbo::decode_transport_block(std::span<const std::int8_t>(q8), p, h8, o);
    EXPECT_TRUE(r16.ok()) << at;
    EXPECT_EQ(r16.bits, tb) << at;
    EXPECT_TRUE(r8.ok()) << at;
    EXPECT_EQ(r8.bits, tb) << at;
  }
}

// A code block decoded to garbage fails its CRC24B and the transport block's CRC24A; the other
// blocks pass theirs.
TEST(TurboTransportBlock, CrcsCatchACorruptedBlock) {
  const int A = 20000;  // 4 code blocks
  const turbo::TransportBlockParams p{.A = A, .G = coded_bits(A, 0.5, 2)};
  const auto tb = random_bits(A, 11);
  auto llr = bpsk_llrs(turbo::encode_transport_block(tb, p), kNoiseless, 0);
  const auto cbs = turbo::plan_transport_block(p);
  ASSERT_EQ(cbs.size(), 4u);
  std::mt19937 rng(4);
  for (int i = 0; i < cbs[2].E; ++i) llr[cbs[0].E + cbs[1].E + i] = (rng() & 1u) ? 20.0f : -20.0f;
  turbo::HarqBuffer<float> h;
  const auto r = turbo::decode_transport_block(llr, p, h, {.backend = Backend::cpu_parallel});
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.crc24a_ok);
  EXPECT_EQ(r.crc24b_ok, (std::vector<bool>{true, true, false, true}));
  EXPECT_NE(r.bits, tb);
}

// A transmission too noisy for its rate fails; a second one with rv 2, combined in the same HARQ
// buffer, decodes, where that second transmission alone does not. A buffer of another transport
// block is refused until cleared.
TEST(TurboTransportBlock, HarqCombiningRescuesAFailedTransmission) {
  const int A = 6200;
  turbo::TransportBlockParams p{.A = A, .G = coded_bits(A, 0.8, 2)};
  const auto tb = random_bits(A, 21);
  const turbo::DecoderOptions o{.backend = Backend::cpu_parallel, .iterations = 8};
  turbo::HarqBuffer<float> h;
  const auto first = turbo::decode_transport_block(
      bpsk_llrs(turbo::encode_transport_block(tb, p), 0.0, 1), p, h, o);
  EXPECT_FALSE(first.ok());
  p.rv = 2;
  const auto second_llr = bpsk_llrs(turbo::encode_transport_block(tb, p), 0.0, 2);
  const auto second = turbo::decode_transport_block(second_llr, p, h, o);
  EXPECT_EQ(h.transmissions, 2);
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(second.bits, tb);
  turbo::HarqBuffer<float> alone;
  EXPECT_FALSE(turbo::decode_transport_block(second_llr, p, alone, o).ok());

  // The buffer belongs to its transport block.
  turbo::TransportBlockParams other = p;
  other.A = 6000;
  other.rv = 0;
  const std::vector<float> zeros(static_cast<std::size_t>(other.G));
  try {
    turbo::decode_transport_block(zeros, other, h, o);
    ADD_FAILURE() << "a HARQ buffer of another transport block was accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("A = 6200"), std::string::npos) << e.what();
  }
  h.clear();
  EXPECT_NO_THROW(turbo::decode_transport_block(zeros, other, h, o));
}

// Early termination: at high SNR every block stops before the maximum (CRC24B with several
// blocks, CRC24A with one), never before min_iterations, with the bits of a full decode.
TEST(TurboTransportBlock, EarlyTerminationStopsSoonerWithTheSameBits) {
  for (int A : {20000, 3000}) {
    const turbo::TransportBlockParams p{.A = A, .G = coded_bits(A, 0.5, 2)};
    const auto tb = random_bits(A, 31);
    const auto llr = bpsk_llrs(turbo::encode_transport_block(tb, p), 3.0, 5);
    turbo::DecoderOptions o{.backend = Backend::cpu_parallel, .iterations = 8};
    turbo::HarqBuffer<float> h0, h1, h2;
    const auto full = turbo::decode_transport_block(llr, p, h0, o);
    o.early_termination = true;
    const auto et = turbo::decode_transport_block(llr, p, h1, o);
    o.min_iterations = 3;
    const auto et3 = turbo::decode_transport_block(llr, p, h2, o);
    const std::string at = "A = " + std::to_string(A);
    EXPECT_EQ(full.iterations, std::vector<int>(full.iterations.size(), 8)) << at;
    ASSERT_TRUE(full.ok()) << at;
    EXPECT_EQ(et.bits, full.bits) << at;
    EXPECT_EQ(et3.bits, full.bits) << at;
    EXPECT_TRUE(et.ok() && et3.ok()) << at;
    for (std::size_t b = 0; b < et.iterations.size(); ++b) {
      EXPECT_LT(et.iterations[b], 8) << at << " block " << b;
      EXPECT_GE(et3.iterations[b], 3) << at << " block " << b;
      EXPECT_LT(et3.iterations[b], 8) << at << " block " << b;
      EXPECT_EQ(et3.iterations[b], std::max(3, et.iterations[b])) << at << " block " << b;
    }
  }
}

TEST(TurboTransportBlock, BadInputIsRefusedWithTheValue) {
  const auto message = [](const auto& f) -> std::string {
    try {
      f();
    } catch (const sigpu::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  const turbo::TransportBlockParams good{.A = 1000, .G = 3000};
  turbo::HarqBuffer<float> h;
  const std::vector<float> llr(3000);
  auto with = [&](turbo::TransportBlockParams p) {
    return message([&] { turbo::decode_transport_block(llr, p, h, {}); });
  };
  auto p = good;
  p.rv = 4;
  EXPECT_NE(with(p).find("rv = 4"), std::string::npos);
  p = good;
  p.Q_m = 3;
  EXPECT_NE(with(p).find("Q_m = 3"), std::string::npos);
  p = good;
  p.G = 2999;
  EXPECT_NE(with(p).find("G = 2999"), std::string::npos);
  p = good;
  p.A = 0;
  EXPECT_NE(with(p).find("A = 0"), std::string::npos);
  p = good;
  p.A = 2000000;  // no soft buffers far beyond what G LLRs justify
  EXPECT_NE(with(p).find("A = 2000000"), std::string::npos);
  p = good;
  p.G = std::int64_t(1) << 40;
  EXPECT_NE(with(p).find("G = 1099511627776"), std::string::npos);
  EXPECT_NE(message([&] {
              turbo::decode_transport_block(std::span<const float>(llr.data(), 2998), good, h, {});
            }).find("2998"),
            std::string::npos);
  auto nan = llr;
  nan[17] = NAN;
  EXPECT_NE(message([&] { turbo::decode_transport_block(nan, good, h, {}); }).find("LLR 17"),
            std::string::npos);
  EXPECT_EQ(h.A, 0);  // nothing refused touched the buffer
  EXPECT_NE(message([&] {
              turbo::decode_transport_block(llr, good, h, {.iterations = 4, .min_iterations = 5});
            }).find("min_iterations = 5"),
            std::string::npos);
}
