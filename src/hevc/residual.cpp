// residual_coding() (7.3.8.11) with the context selection of 9.3.4.2.4 to 9.3.4.2.7 and the
// binarization of coeff_abs_level_remaining (9.3.3.11).
#include <algorithm>
#include <cstring>
#include <string>

#include "hevc/scan.hpp"
#include "hevc/slice_decoder.hpp"

namespace sigpu::hevc {
namespace {

constexpr std::uint8_t kCtxIdxMap4x4[16] = {0, 1, 4, 5, 2, 3, 4, 5, 6, 6, 8, 8, 7, 7, 8, 8};

// sigCtx of a coefficient at (xP, yP), index yP * 4 + xP, inside a sub-block of a block larger
// than 4x4, by prevCsbf (9.3.4.2.5).
constexpr std::uint8_t kSigCtxBySubBlock[4][16] = {
    {2, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {2, 1, 0, 0, 2, 1, 0, 0, 2, 1, 0, 0, 2, 1, 0, 0},
    {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
};

// Everything the coefficient loop looks up, built once (one static guard per block):
//  - sig_ctx: the context variable (index into ContextSet) of sig_coeff_flag at each scan
//    position of a sub-block, for every case that selects it: [log2 - 2][chroma][scanIdx]
//    [prevCsbf][first sub-block][scan position];
//  - offset: where the coefficient at a scan position of a sub-block lies relative to the
//    sub-block's first one, (yP << log2) + xP: [log2 - 2][scanIdx][scan position];
//  - bit: its bit yP * 4 + xP in a sub-block's mask of significant coefficients;
//  - sb_pos / pos_in_sb: the scan position of a sub-block (xS + 8 yS) and of a coefficient inside
//    one (xP + 4 yP), the inverse of the scan orders, for the last significant coefficient;
//  - neighbours: the scan positions of the sub-blocks to the right of and below the one at each
//    scan position, 64 where that lies outside the block.
struct ResidualTables {
  std::uint8_t sig_ctx[4][2][3][4][2][16] = {};
  std::uint16_t offset[4][3][16] = {};
  std::uint8_t bit[3][16] = {};
  std::uint8_t sb_pos[4][3][64] = {};
  std::uint8_t pos_in_sb[3][16] = {};
  struct Neighbours {
    std::uint8_t right, below;
  };
  Neighbours neighbours[4][3][64] = {};
  ResidualTables() {
    const auto& order = scan_tables().order;
    for (int l = 0; l < 4; ++l)
      for (int chroma = 0; chroma < 2; ++chroma)
        for (int scan = 0; scan < 3; ++scan)
          for (int prev = 0; prev < 4; ++prev)
            for (int first = 0; first < 2; ++first) {
              const auto& pos = order[2][scan];
              const int log2 = l + 2;
              const int base = kCtxSig + (chroma ? 27 : 0);
              int offs;  // of the luma/chroma and block-size context sets
              if (!chroma)
                offs = (first ? 0 : 3) + (log2 == 3 ? (scan == 0 ? 9 : 15) : 21);
              else
                offs = log2 == 3 ? 9 : 12;
              for (int p = 0; p < 16; ++p) {
                const int i = (pos[p].y << 2) + pos[p].x;
                sig_ctx[l][chroma][scan][prev][first][p] = static_cast<std::uint8_t>(
                    base + (log2 == 2 ? kCtxIdxMap4x4[i] : kSigCtxBySubBlock[prev][i] + offs));
              }
              if (log2 > 2 && first) sig_ctx[l][chroma][scan][prev][first][0] = base;  // DC
            }
    for (int scan = 0; scan < 3; ++scan) {
      for (int p = 0; p < 16; ++p) {
        const ScanPos q = order[2][scan][p];
        for (int l = 0; l < 4; ++l)
          offset[l][scan][p] = static_cast<std::uint16_t>((q.y << (l + 2)) + q.x);
        bit[scan][p] = static_cast<std::uint8_t>(q.y * 4 + q.x);
        pos_in_sb[scan][q.y * 4 + q.x] = static_cast<std::uint8_t>(p);
      }
      for (int l = 0; l < 4; ++l) {
        const int n = 1 << l;
        for (int s = 0; s < n * n; ++s) {
          const ScanPos q = order[l][scan][s];
          sb_pos[l][scan][q.y * 8 + q.x] = static_cast<std::uint8_t>(s);
        }
        for (int s = 0; s < n * n; ++s) {
          const ScanPos q = order[l][scan][s];
          neighbours[l][scan][s] = {
              static_cast<std::uint8_t>(q.x + 1 < n ? sb_pos[l][scan][q.y * 8 + q.x + 1] : 64),
              static_cast<std::uint8_t>(q.y + 1 < n ? sb_pos[l][scan][(q.y + 1) * 8 + q.x] : 64)};
        }
      }
    }
  }
};

const ResidualTables& residual_tables() {
  static const ResidualTables t;
  return t;
}

// greater1Ctx after a coeff_abs_level_greater1_flag equal to 0 (9.3.4.2.6): 1, 2 then 3 stays 3,
// 0 stays 0.
constexpr std::uint8_t kGreater1Next[4] = {0, 2, 3, 3};

}  // namespace

[[gnu::always_inline]] inline int SliceDecoder::last_sig_prefix(Cabac& cabac, int log2, int c,
                                                                int ctx_base) {
  const int offset = c == 0 ? 3 * (log2 - 2) + ((log2 - 1) >> 2) : 15;
  const int shift = c == 0 ? (log2 + 1) >> 2 : log2 - 2;
  const int max = (log2 << 1) - 1;
  int v = 0;
  while (v < max && cabac.decode(ctx_[ctx_base + offset + (v >> shift)])) ++v;
  return v;
}

[[gnu::always_inline]] inline std::uint32_t SliceDecoder::coeff_abs_level_remaining(Cabac& cabac,
                                                                                    int rice) {
  const int prefix = cabac.bypass_ones(33);
  if (prefix > 32) fail("coeff_abs_level_remaining", "prefix longer than 32 bins");
  std::uint64_t v;
  if (prefix <= 3) {
    v = (static_cast<std::uint64_t>(prefix) << rice) + cabac.bypass_bits(rice);
  } else {
    const int pm3 = prefix - 3;
    if (pm3 + rice > 20)
      fail("coeff_abs_level_remaining", "value beyond the 16-bit coefficient range");
    v = ((static_cast<std::uint64_t>(1) << pm3) + 2) << rice;
    v += cabac.bypass_bits(pm3 + rice);
  }
  if (v > 32768) fail("coeff_abs_level_remaining", "value beyond the 16-bit coefficient range");
  return static_cast<std::uint32_t>(v);
}

int SliceDecoder::residual_coding(int log2, int c, int scan_idx, std::uint32_t* out, bool& tskip,
                                  int& cols, int& rows) {
  // The engine's state in a local copy for the block, written back at the end: the context
  // updates store bytes, which may alias any member, so the members would be reloaded and
  // stored around every bin; a local whose address never escapes stays in registers. A
  // DecodeError leaves cabac_ behind, but the slice ends there.
  Cabac cabac = cabac_;
  const int n = 1 << log2;
  tskip = false;
  cols = rows = 0;
  if (pps_.transform_skip && !transquant_bypass_ && log2 <= pps_.log2_max_transform_skip_size)
    tskip = cabac.decode(ctx_[kCtxTransformSkip + (c ? 1 : 0)]);

  int last_x = last_sig_prefix(cabac, log2, c, kCtxLastX);
  int last_y = last_sig_prefix(cabac, log2, c, kCtxLastY);
  if (last_x > 3) {
    const int k = (last_x >> 1) - 1;
    last_x = (1 << k) * (2 + (last_x & 1)) + static_cast<int>(cabac.bypass_bits(k));
  }
  if (last_y > 3) {
    const int k = (last_y >> 1) - 1;
    last_y = (1 << k) * (2 + (last_y & 1)) + static_cast<int>(cabac.bypass_bits(k));
  }
  if (scan_idx == 2) std::swap(last_x, last_y);
  if (last_x >= n || last_y >= n)
    fail("last_sig_coeff_prefix", "position outside the transform block");

  const ResidualTables& tables = residual_tables();
  const int log2_sb = log2 - 2;
  const auto& sb_scan = scan_tables().order[log2_sb][scan_idx];
  const std::uint16_t* offset = tables.offset[log2_sb][scan_idx];
  const std::uint8_t* bit = tables.bit[scan_idx];
  const int last_sb = tables.sb_pos[log2_sb][scan_idx][(last_y >> 2) * 8 + (last_x >> 2)];
  const int last_pos = tables.pos_in_sb[scan_idx][(last_y & 3) * 4 + (last_x & 3)];

  // coded_sub_block_flag by scan position; [64], for the neighbours outside the block, stays 0.
  std::uint8_t coded[65] = {};
  const ResidualTables::Neighbours* const neighbours = tables.neighbours[log2_sb][scan_idx];
  int count = 0;
  int greater1_ctx = 1;
  bool first_sb = true;
  const bool sdh_allowed = pps_.sign_data_hiding && !transquant_bypass_;
  std::uint8_t* const ctx_csbf = &ctx_[kCtxCodedSubBlock + (c ? 2 : 0)];
  std::uint8_t* const ctx_g1_base = &ctx_[kCtxGreater1 + (c ? 16 : 0)];
  std::uint8_t* const ctx_g2_base = &ctx_[kCtxGreater2 + (c ? 4 : 0)];
  const std::uint8_t(*const sig_ctx_by_prev)[2][16] = tables.sig_ctx[log2_sb][c ? 1 : 0][scan_idx];

  for (int i = last_sb; i >= 0; --i) {
    const int right = coded[neighbours[i].right], below = coded[neighbours[i].below];
    bool infer_dc = false;
    if (i < last_sb && i > 0) {
      if (!cabac.decode(ctx_csbf[right | below])) continue;
      infer_dc = true;
    }
    coded[i] = 1;
    const int xs = sb_scan[i].x, ys = sb_scan[i].y;

    std::uint8_t sig_pos[16];  // scan positions of the significant coefficients, decoding order
    int nsig = 0;
    int start = 15;
    if (i == last_sb) {
      sig_pos[nsig++] = static_cast<std::uint8_t>(last_pos);
      start = last_pos - 1;
    }
    const std::uint8_t* sig_ctx = sig_ctx_by_prev[right + 2 * below][i == 0 ? 1 : 0];
    // Stored unconditionally and counted by the bin: no branch on an unpredictable bin.
    for (int p = start; p > 0; --p) {
      sig_pos[nsig] = static_cast<std::uint8_t>(p);
      nsig += cabac.decode(ctx_[sig_ctx[p]]);
    }
    if (start >= 0) {
      sig_pos[nsig] = 0;
      nsig += (infer_dc && nsig == 0) ? 1 : cabac.decode(ctx_[sig_ctx[0]]);
    }
    if (nsig == 0) continue;

    int ctx_set = (i == 0 || c > 0) ? 0 : 2;
    if (!first_sb && greater1_ctx == 0) ++ctx_set;
    first_sb = false;
    greater1_ctx = 1;
    std::uint8_t* const ctx_g1 = ctx_g1_base + ctx_set * 4;
    int abs_level[16];
    const int n_g1 = nsig < 8 ? nsig : 8;
    int first_g1 = -1;
    for (int k = 0; k < n_g1; ++k) {
      const int g1 = cabac.decode(ctx_g1[greater1_ctx]);
      abs_level[k] = 1 + g1;
      if (g1) {
        greater1_ctx = 0;
        if (first_g1 < 0) first_g1 = k;
      } else {
        greater1_ctx = kGreater1Next[greater1_ctx];
      }
    }
    for (int k = n_g1; k < nsig; ++k) abs_level[k] = 1;
    if (first_g1 >= 0) abs_level[first_g1] += cabac.decode(ctx_g2_base[ctx_set]);
    const bool sign_hidden = sdh_allowed && sig_pos[0] - sig_pos[nsig - 1] > 3;
    const int coded_signs = sign_hidden ? nsig - 1 : nsig;
    // The sign bits from the top down, coefficient k's at bit 31 - k.
    std::uint32_t signs = coded_signs ? cabac.bypass_bits(coded_signs) << (32 - coded_signs) : 0;

    // coeff_abs_level_remaining where the flags left the level at its cap: 3 for the first
    // coefficient with greater1, 2 for the others of the first 8, 1 beyond.
    int rice = 0, sum_abs = 0;
    for (int k = 0; k < nsig; ++k) {
      int a = abs_level[k];
      if (k >= 8 || a == (k == first_g1 ? 3 : 2)) {
        a += static_cast<int>(coeff_abs_level_remaining(cabac, rice));
        if (a > 3 * (1 << rice)) rice = std::min(rice + 1, 4);
        if (a > 32768) fail("coeff_abs_level_remaining", "coefficient beyond 16 bits");
        abs_level[k] = a;
      }
      sum_abs += a;
    }
    if (sign_hidden && (sum_abs & 1)) signs |= 1u << (32 - nsig);

    const int sb_first = ((ys << 2) << log2) + (xs << 2);
    unsigned mask = 0;  // bit yP * 4 + xP of each significant coefficient
    for (int k = 0; k < nsig; ++k) {
      const int p = sig_pos[k];
      const int neg = static_cast<int>(signs >> 31);
      signs <<= 1;
      const int v = (abs_level[k] ^ -neg) + neg;
      out[count++] = pack_coeff(sb_first + offset[p], std::min(v, 32767));
      mask |= 1u << bit[p];
    }
    const unsigned column_bits = (mask | mask >> 4 | mask >> 8 | mask >> 12) & 15;
    cols = std::max(cols, (xs << 2) + 32 - __builtin_clz(column_bits));
    rows = std::max(rows, (ys << 2) + 1 + ((31 - __builtin_clz(mask)) >> 2));
  }
  cabac_ = cabac;
  return count;
}

}  // namespace sigpu::hevc
