// Units checked against values from the specification: NAL unescaping and entry point mapping,
// the DCT matrix, the fast inverse transforms against the plain two-stage formula, CABAC context
// initialisation and its bins against a bit-serial decoder, scan orders, scaling list defaults;
// intra prediction's AVX2 kernels against their portable twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "hevc/cabac.hpp"
#include "hevc/errors.hpp"
#include "hevc/intra_pred.hpp"
#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/scan.hpp"
#include "hevc/transform.hpp"

namespace sigpu::hevc {
namespace {

// The arithmetic decoder as 9.3.4.3 writes it, a bit at a time: the engine's bins (bypass runs
// taken by division, unary runs by their quotient, refills a word at a time) must be these.
class SerialCabac {
 public:
  SerialCabac(const std::vector<std::uint8_t>& d) : d_(d) {
    for (int i = 0; i < 9; ++i) offset_ = (offset_ << 1) | bit();
  }
  int decode(int& state, int& mps) {
    const int lps = cabac_lps_range(state, (range_ >> 6) & 3);
    range_ -= lps;
    int bin = mps;
    if (offset_ >= range_) {
      bin = 1 - mps;
      offset_ -= range_;
      range_ = lps;
      if (state == 0) mps = 1 - mps;
      state = cabac_trans_idx_lps(state);
    } else {
      state = std::min(state + 1, 62);
    }
    while (range_ < 256) {
      range_ <<= 1;
      offset_ = (offset_ << 1) | bit();
    }
    return bin;
  }
  int bypass() {
    offset_ = (offset_ << 1) | bit();
    if (offset_ < range_) return 0;
    offset_ -= range_;
    return 1;
  }

 private:
  unsigned bit() {
    const std::size_t byte = pos_ >> 3;
    const unsigned b = byte < d_.size() ? (d_[byte] >> (7 - (pos_ & 7))) & 1 : 0;
    ++pos_;
    return b;
  }
  const std::vector<std::uint8_t>& d_;
  std::size_t pos_ = 0;
  unsigned offset_ = 0, range_ = 510;
};

TEST(HevcUnits, CabacBinsAreTheSerialDecodersBins) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::uint8_t> d(64 + rng() % 64);
    for (auto& b : d) b = static_cast<std::uint8_t>(rng());
    d[0] = static_cast<std::uint8_t>(d[0] & 0xfe);  // ivlOffset below 510
    Cabac engine;
    ASSERT_TRUE(engine.init(d.data(), d.size(), 0));
    SerialCabac ref(d);
    const int state0 = static_cast<int>(rng() % 63), mps0 = static_cast<int>(rng() % 2);
    std::uint8_t ctx = static_cast<std::uint8_t>(state0 << 1 | mps0);
    int state = state0, mps = mps0;
    // Past the data's end both read zeros: runs of every length, there too.
    for (int op = 0; op < 400; ++op) {
      switch (rng() % 3) {
        case 0:
          ASSERT_EQ(engine.decode(ctx), ref.decode(state, mps)) << "round " << round;
          break;
        case 1: {
          const int n = static_cast<int>(rng() % 33);
          std::uint32_t want = 0;
          for (int i = 0; i < n; ++i) want = want << 1 | static_cast<std::uint32_t>(ref.bypass());
          ASSERT_EQ(engine.bypass_bits(n), want) << "round " << round << ", " << n << " bins";
          break;
        }
        default: {
          const int max = static_cast<int>(rng() % 40);
          int want = 0;
          while (want < max && ref.bypass()) ++want;
          ASSERT_EQ(engine.bypass_ones(max), want) << "round " << round << ", max " << max;
        }
      }
    }
  }
  // A stream whose first 9 bits are 510 or 511 cannot have been made by an encoder.
  const std::vector<std::uint8_t> bad[] = {{0xff, 0x00, 0x12}, {0xff, 0x80, 0x12}};
  for (const auto& b : bad) EXPECT_FALSE(Cabac().init(b.data(), b.size(), 0));
  const std::vector<std::uint8_t> good = {0xfe, 0xff, 0x12};
  EXPECT_TRUE(Cabac().init(good.data(), good.size(), 0));
}

TEST(HevcUnits, AnnexBSplitAndEmulationPrevention) {
  const std::vector<std::uint8_t> s = {0, 0, 0, 1, 0x40, 0x01, 0xaa, 0,    0,    3, 1, 0,
                                       0, 3, 0, 0, 0,    1,    0x42, 0x01, 0x55, 0, 0};
  const auto nals = split_annexb(s);
  ASSERT_EQ(nals.size(), 2u);
  EXPECT_EQ(nals[0].start_code, 0u);
  EXPECT_EQ(nals[1].start_code, 14u);
  EXPECT_EQ(nals[1].end, 21u);  // trailing zeros cut
  const NalUnit u = parse_nal(std::span(s).subspan(nals[0].begin, nals[0].end - nals[0].begin));
  EXPECT_EQ(u.type, kNalVps);
  EXPECT_EQ(u.rbsp, (std::vector<std::uint8_t>{0xaa, 0, 0, 1, 0, 0}));
  ASSERT_EQ(u.removed.size(), 2u);
  // Escaped payload offsets 0..7 (aa 00 00 03 01 00 00 03): the 01 is escaped offset 4.
  EXPECT_EQ(u.rbsp_offset(4), 3u);
  EXPECT_EQ(u.rbsp_offset(3), 3u);
  EXPECT_EQ(u.rbsp_offset(2), 2u);
  EXPECT_THROW(parse_nal(std::span(s).subspan(4, 1)), DecodeError);
}

TEST(HevcUnits, DctRowsMatchTheSpecification) {
  // A single coefficient at (k, 0) through the 2-D inverse gives row k of the 1-D matrix scaled;
  // check the 4-point basis (8.6.4.2) through the DC column: c[0] = 64 -> 64*64 >> 7 ... >> 12.
  std::int32_t c[16] = {};
  c[1] = 64;  // horizontal frequency 1, row 0
  inverse_transform(c, 2, false, 8);
  // Row 1 of the 4-point DCT is 83 36 -36 -83; vertical DC is 64: (64*64 + 64) >> 7 = 32, then
  // (32 * {83, 36, -36, -83} + 2048) >> 12.
  const int expect[4] = {(32 * 83 + 2048) >> 12, (32 * 36 + 2048) >> 12, (32 * -36 + 2048) >> 12,
                         (32 * -83 + 2048) >> 12};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(c[y * 4 + x], expect[x]) << x << "," << y;
  // The 32-point basis: a lone (1, 0) coefficient of a large value shows 90 90 88 85 ... 4.
  std::int32_t big[32 * 32] = {};
  big[1] = 4096;
  inverse_transform(big, 5, false, 8);
  const int row1[16] = {90, 90, 88, 85, 82, 78, 73, 67, 61, 54, 46, 38, 31, 22, 13, 4};
  const int dc = (4096 * 64 + 64) >> 7;
  for (int x = 0; x < 16; ++x) {
    EXPECT_EQ(big[x], (dc * row1[x] + 2048) >> 12);
    EXPECT_EQ(big[31 - x], (dc * -row1[x] + 2048) >> 12);
  }
}

TEST(HevcUnits, DstAndTransformSkip) {
  std::int32_t c[16] = {};
  c[0] = 64;
  inverse_transform(c, 2, true, 8);
  const int col0[4] = {29, 55, 74, 84};  // first DST basis, scaled through both stages
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int v = (64 * col0[y] + 64) >> 7;
      EXPECT_EQ(c[y * 4 + x], (v * col0[x] + 2048) >> 12);
    }
  std::int32_t t[16] = {5, -7};
  transform_skip_residual(t, t, 2, 10);
  EXPECT_EQ(t[0], (5 * 128 + 512) >> 10);
  EXPECT_EQ(t[1], (-7 * 128 + 512) >> 10);
}

// 8.6.4.2 written out plainly: coefficient matrix from the magnitudes of the specification's
// 32-point table with the signs of cos((2n + 1) k pi / 64), both stages as sums over all inputs.
std::vector<std::int32_t> reference_inverse(const std::vector<std::int32_t>& c, int log2, bool dst,
                                            int bit_depth) {
  static constexpr int kMag[33] = {64, 90, 90, 90, 89, 88, 87, 85, 83, 82, 80,
                                   78, 75, 73, 70, 67, 64, 61, 57, 54, 50, 46,
                                   43, 38, 36, 31, 25, 22, 18, 13, 9,  4,  0};
  static constexpr int kDst[4][4] = {
      {29, 55, 74, 84}, {74, 74, 0, -74}, {84, -29, -74, 55}, {55, -84, 74, -29}};
  const int n = 1 << log2;
  auto m = [&](int k, int i) {  // row k (frequency), column i (sample)
    if (dst) return kDst[k][i];
    const int kk = k * (32 / n);
    if (kk == 0) return 64;
    int a = ((2 * i + 1) * kk) % 128;
    if (a > 64) a = 128 - a;
    if (a > 32) a = 64 - a;
    const double cosine = std::cos((2 * i + 1) * kk * M_PI / 64);
    return cosine < 0 ? -kMag[a] : kMag[a];
  };
  std::vector<std::int32_t> mid(c.size()), out(c.size());
  for (int x = 0; x < n; ++x)
    for (int y = 0; y < n; ++y) {
      std::int64_t sum = 0;
      for (int k = 0; k < n; ++k) sum += std::int64_t{m(k, y)} * c[k * n + x];
      mid[y * n + x] =
          static_cast<std::int32_t>(std::clamp<std::int64_t>((sum + 64) >> 7, -32768, 32767));
    }
  const int shift = 20 - bit_depth;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      std::int64_t sum = 0;
      for (int k = 0; k < n; ++k) sum += std::int64_t{m(k, x)} * mid[y * n + k];
      out[y * n + x] = static_cast<std::int32_t>((sum + (1 << (shift - 1))) >> shift);
    }
  return out;
}

// The decoder's transform (coded region only, partial butterflies, a DC shortcut; the AVX2
// multiply-add kernels where the CPU has them) and its portable twin (a sparse second pass, an
// AVX2 clone of it where the CPU has AVX2) on random blocks from a lone DC to dense ones at the
// 16-bit extremes.
TEST(HevcUnits, FastInverseTransformsMatchThePlainFormula) {
  std::mt19937 rng(5);
  int checked = 0;
  for (int log2 = 2; log2 <= 5; ++log2)
    for (int dst = 0; dst < (log2 == 2 ? 2 : 1); ++dst)
      for (int bit_depth : {8, 10, 12})
        for (int trial = 0; trial < 40; ++trial) {
          const int n = 1 << log2;
          std::vector<std::int32_t> c(static_cast<std::size_t>(n) * n, 0);
          // Non-zero coefficients inside a random top-left region, at a random density.
          const int cols = 1 + static_cast<int>(rng() % n), rows = 1 + static_cast<int>(rng() % n);
          const int density = trial % 4 == 0 ? 0 : 1 + static_cast<int>(rng() % 100);
          const bool extreme = trial % 5 == 1;
          for (int y = 0; y < rows; ++y)
            for (int x = 0; x < cols; ++x)
              if ((x == 0 && y == 0) || static_cast<int>(rng() % 100) < density)
                c[y * n + x] = extreme ? (rng() % 2 ? 32767 : -32768)
                                       : static_cast<std::int32_t>(rng() % 4001) - 2000;
          const auto expect = reference_inverse(c, log2, dst, bit_depth);
          auto whole = c;
          inverse_transform(whole.data(), log2, dst, bit_depth);
          std::vector<std::int32_t> region(c.size()), portable(c.size());
          inverse_transform(c.data(), region.data(), log2, dst, bit_depth, cols, rows);
          inverse_transform_portable(c.data(), portable.data(), log2, dst, bit_depth, cols, rows);
          ASSERT_EQ(whole, expect) << "log2 " << log2 << " dst " << dst << " trial " << trial;
          ASSERT_EQ(region, expect) << "log2 " << log2 << " dst " << dst << " trial " << trial;
          ASSERT_EQ(portable, expect) << "log2 " << log2 << " dst " << dst << " trial " << trial;
          ++checked;
        }
  EXPECT_EQ(checked, 600);
}

// Every mode, size and bit depth with random reference samples (flat ones too, which make the
// 32x32 luma blocks take strong smoothing): the prediction with the AVX2 kernels (where this
// CPU has AVX2) equals the portable code's, and neither writes outside its block.
TEST(HevcUnits, IntraPredictionKernelsMatchTheirTwin) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int log2 = 2; log2 <= 5; ++log2)
    for (int mode = 0; mode < 35; ++mode)
      for (int bit_depth : {8, 10, 12})
        for (int variant = 0; variant < 4; ++variant) {
          const int n = 1 << log2, stride = n + 8;
          const int max_val = (1 << bit_depth) - 1;
          std::vector<std::int32_t> ref(4 * n + 1);
          const int flat = static_cast<int>(rng() % (max_val + 1));
          for (auto& v : ref)
            v = variant == 3 ? flat : static_cast<std::int32_t>(rng() % (max_val + 1));
          IntraParams p;
          p.log2 = log2;
          p.mode = mode;
          p.luma = variant != 1;
          p.filter_refs = variant != 2;
          p.strong_smoothing = true;
          p.bit_depth = bit_depth;
          std::vector<std::uint16_t> fast(static_cast<std::size_t>(stride) * n, 0xabcd),
              twin = fast;
          auto ref_fast = ref, ref_twin = ref;
          intra_predict(ref_fast.data(), p, fast.data(), stride);
          p.use_simd = false;
          intra_predict(ref_twin.data(), p, twin.data(), stride);
          ASSERT_EQ(fast, twin) << "log2 " << log2 << " mode " << mode << " bits " << bit_depth
                                << " variant " << variant;
          for (int y = 0; y < n; ++y)
            for (int x = n; x < stride; ++x) ASSERT_EQ(fast[y * stride + x], 0xabcd);
          ++checked;
        }
  EXPECT_EQ(checked, 4 * 35 * 3 * 4);
}

TEST(HevcUnits, ContextInitialisation) {
  // 9.3.2.2 for initValue 154 (slope 9, offset 10): m = 0, n = 64 -> preCtxState 64 at any QP:
  // valMps 1, pStateIdx 0.
  const ContextSet c = init_contexts(30);
  EXPECT_EQ(c[kCtxTransquantBypass], (0 << 1) | 1);
  // split_cu_flag ctx 0 = 139: slope 8, offset 11 -> m = -5, n = 72; QP 30: (-5*30 >> 4) + 72 =
  // 62 -> valMps 0, pStateIdx 1.
  EXPECT_EQ(c[kCtxSplitCu], (1 << 1) | 0);
}

TEST(HevcUnits, DiagonalScan) {
  const auto& s = scan_tables().order[2][0];
  const int xs[6] = {0, 0, 1, 0, 1, 2}, ys[6] = {0, 1, 0, 2, 1, 0};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(s[i].x, xs[i]);
    EXPECT_EQ(s[i].y, ys[i]);
  }
  EXPECT_EQ(s[15].x, 3);
  EXPECT_EQ(s[15].y, 3);
}

TEST(HevcUnits, DefaultScalingFactors) {
  const ScalingFactors f = ScalingListData::defaults().factors();
  // Table 7-6 as a matrix: intra 8x8 row 7 ends with 115; 16x16 repeats each entry 2x2 with
  // DC 16; 32x32 4x4.
  EXPECT_EQ(f.matrix(3, 0)[7 * 8 + 7], 115);
  EXPECT_EQ(f.matrix(3, 3)[7 * 8 + 7], 91);
  EXPECT_EQ(f.matrix(3, 0)[0 * 8 + 4], 17);
  EXPECT_EQ(f.matrix(4, 0)[15 * 16 + 15], 115);
  EXPECT_EQ(f.matrix(4, 0)[0], 16);
  EXPECT_EQ(f.matrix(5, 0)[31 * 32 + 28], 115);
  EXPECT_EQ(f.matrix(2, 0)[15], 16);
}

}  // namespace
}  // namespace sigpu::hevc
