// Units checked against values from the specification: NAL unescaping and entry point mapping,
// the DCT matrix, CABAC context initialisation, scan orders, scaling list defaults.
#include <gtest/gtest.h>

#include "hevc/cabac.hpp"
#include "hevc/errors.hpp"
#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/scan.hpp"
#include "hevc/transform.hpp"

namespace sigpu::hevc {
namespace {

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
  transform_skip_residual(t, 2, 10);
  EXPECT_EQ(t[0], (5 * 128 + 512) >> 10);
  EXPECT_EQ(t[1], (-7 * 128 + 512) >> 10);
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
  EXPECT_EQ(f.m[1][0][7 * 8 + 7], 115);
  EXPECT_EQ(f.m[1][3][7 * 8 + 7], 91);
  EXPECT_EQ(f.m[1][0][0 * 8 + 4], 17);
  EXPECT_EQ(f.m[2][0][15 * 16 + 15], 115);
  EXPECT_EQ(f.m[2][0][0], 16);
  EXPECT_EQ(f.m[3][0][31 * 32 + 28], 115);
  EXPECT_EQ(f.m[0][0][15], 16);
}

}  // namespace
}  // namespace sigpu::hevc
