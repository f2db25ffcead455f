// The pieces checked alone against FFmpeg's own formulations: slice placement, codebook
// switching tables, and the IDCT's row shortcut.
#include <gtest/gtest.h>

#include "prores/geometry.hpp"
#include "prores/idct.hpp"
#include "prores/tables.hpp"
#include "prores/vld.hpp"

namespace sigpu::prores {
namespace {

TEST(ProresGeometry, SlicesMatchFfmpegsWalk) {
  for (int log2 = 0; log2 <= 3; ++log2)
    for (int mbw = 1; mbw <= 70; ++mbw) {
      // libavcodec/proresdec2.c decode_picture_header: halve the slice until it fits.
      int mb_x = 0, mb_y = 0, size = 1 << log2, n = 0;
      for (int row = 0; row < 3; ++row) {
        while (mb_x < mbw) {
          while (mbw - mb_x < size) size >>= 1;
          const SliceGeometry g = slice_geometry(n++, mbw, log2);
          ASSERT_EQ(g.mb_x, mb_x) << "mb_width " << mbw << " log2 " << log2;
          ASSERT_EQ(g.mb_y, mb_y);
          ASSERT_EQ(1 << g.log2_mbs, size);
          mb_x += size;
        }
        mb_x = 0;
        ++mb_y;
        size = 1 << log2;
      }
      EXPECT_EQ(n, 3 * slices_per_row(mbw, log2));
    }
}

TEST(ProresTables, CodebooksMatchFfmpegsTables) {
  const unsigned dc[7] = {0x04, 0x28, 0x28, 0x4D, 0x4D, 0x70, 0x70};
  const unsigned run[16] = {0x06, 0x06, 0x05, 0x05, 0x04, 0x29, 0x29, 0x29,
                            0x29, 0x28, 0x28, 0x28, 0x28, 0x28, 0x28, 0x4C};
  const unsigned lev[10] = {0x04, 0x0A, 0x05, 0x06, 0x04, 0x28, 0x28, 0x28, 0x28, 0x4C};
  for (unsigned i = 0; i < 40; ++i) {
    EXPECT_EQ(dc_codebook(i), dc[i < 6 ? i : 6]) << i;
    EXPECT_EQ(run_codebook(i), run[i < 15 ? i : 15]) << i;
    EXPECT_EQ(level_codebook(i), lev[i < 9 ? i : 9]) << i;
  }
}

TEST(ProresIdct, DcOnlyRowsTakeFfmpegsShortcut) {
  // At 12 bits the full row transform would give (32767 * dc + 32768) >> 16, which differs
  // from FFmpeg's shortcut (dc + 1) >> 1 for large DCs.
  std::int16_t row[8] = {32001, 0, 0, 0, 0, 0, 0, 0};
  idct_row<12>(row);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(row[i], 16001);
  std::int16_t row10[8] = {-7, 0, 0, 0, 0, 0, 0, 0};
  idct_row<10>(row10);
  EXPECT_EQ(row10[3], -3);
}

TEST(ProresIdct, FlatBlockGivesMidGrey) {
  std::int16_t block[64] = {};
  std::int16_t q[64];
  for (auto& v : q) v = 4;
  idct_block<10>(block, q);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(clip_pixel<10>(block[i]), 512) << i;
  std::int16_t block12[64] = {};
  idct_block<12>(block12, q);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(clip_pixel<12>(block12[i]), 2048) << i;
}

TEST(ProresVld, CodewordsOfEachKind) {
  // Rice order 0, switch 2 (codebook 0x06): "01" -> 1. Exp-Golomb order 1 after the switch:
  // "0001 1" with q = 3: bits = 1 - 2 + 6 = 5, value 0b00011 - 2 + 3 = 4.
  const std::uint8_t data[] = {0b01000110, 0, 0, 0, 0, 0, 0, 0};
  VldBits br(data, 0, sizeof data);
  unsigned v = 0;
  unsigned n = decode_codeword(br.cache(), 0x06, v);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(v, 1u);
  br.consume(n);
  br.fill();
  n = decode_codeword(br.cache(), 0x06, v);
  ASSERT_EQ(n, 5u);
  EXPECT_EQ(v, 4u);
  // All zeros (from an unaligned start): FFmpeg refuses the code (over 31 bits).
  VldBits zeros(data, 2, sizeof data);
  EXPECT_EQ(decode_codeword(zeros.cache(), 0x06, v), 0u);
}

TEST(ProresVld, BitsPastTheEndReadAsZero) {
  const std::uint8_t data[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  VldBits br(data, 1, 7);
  EXPECT_EQ(br.bits_left(), 48);
  EXPECT_EQ(br.cache() >> 32, 0xFFFFFF00u);  // bytes 1-3, then the next word's
  br.consume(24);
  br.fill();
  EXPECT_EQ(br.cache() >> 32, 0xFFFFFF00u);  // bytes 4-6; byte 7 lies past the end
  EXPECT_EQ(br.bits_left(), 24);
  br.consume(32);
  EXPECT_EQ(br.bits_left(), -8);
}

TEST(ProresVld, SliceHeaderClampsQuantiser) {
  const std::uint8_t h1[8] = {6 << 3, 0, 0, 2, 0, 1, 0xAA, 0xBB};
  SliceHeader h;
  ASSERT_EQ(parse_slice_header(h1, 12, h), kVldOk);
  EXPECT_EQ(h.qscale, 1);
  EXPECT_EQ(h.size[2], 12 - 2 - 1 - 6);
  const std::uint8_t h2[8] = {6 << 3, 200, 0, 2, 0, 1, 0, 0};
  ASSERT_EQ(parse_slice_header(h2, 12, h), kVldOk);
  EXPECT_EQ(h.qscale, (200 - 96) * 4);
  const std::uint8_t h3[8] = {6 << 3, 240, 0, 20, 0, 1, 0, 0};
  EXPECT_EQ(parse_slice_header(h3, 12, h), kVldBadHeader);
}

}  // namespace
}  // namespace sigpu::prores
