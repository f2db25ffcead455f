// residual_coding() (7.3.8.11) with the context selection of 9.3.4.2.4 to 9.3.4.2.7 and the
// binarization of coeff_abs_level_remaining (9.3.3.11).
#include <algorithm>
#include <cstring>
#include <string>

#include "hevc/scan.hpp"
#include "hevc/slice_decoder.hpp"
#include "hevc/transform.hpp"

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

// The context variable (index into ContextSet) of sig_coeff_flag at each scan position of a
// sub-block, for every case that selects it: [log2 - 2][chroma][scanIdx][prevCsbf][first
// sub-block][scan position]. Built once, so that the coefficient loop only looks it up.
struct SigCtxTables {
  std::uint8_t ctx[4][2][3][4][2][16] = {};
  SigCtxTables() {
    for (int l = 0; l < 4; ++l)
      for (int chroma = 0; chroma < 2; ++chroma)
        for (int scan = 0; scan < 3; ++scan)
          for (int prev = 0; prev < 4; ++prev)
            for (int first = 0; first < 2; ++first) {
              const auto& pos = scan_tables().order[2][scan];
              const int log2 = l + 2;
              const int base = kCtxSig + (chroma ? 27 : 0);
              int offset;  // of the luma/chroma and block-size context sets
              if (!chroma)
                offset = (first ? 0 : 3) + (log2 == 3 ? (scan == 0 ? 9 : 15) : 21);
              else
                offset = log2 == 3 ? 9 : 12;
              for (int p = 0; p < 16; ++p) {
                const int i = (pos[p].y << 2) + pos[p].x;
                ctx[l][chroma][scan][prev][first][p] = static_cast<std::uint8_t>(
                    base + (log2 == 2 ? kCtxIdxMap4x4[i] : kSigCtxBySubBlock[prev][i] + offset));
              }
              if (log2 > 2 && first) ctx[l][chroma][scan][prev][first][0] = base;  // DC
            }
  }
};

const SigCtxTables& sig_ctx_tables() {
  static const SigCtxTables t;
  return t;
}

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
  int prefix = 0;
  while (cabac.bypass()) {
    if (++prefix > 32) fail("coeff_abs_level_remaining", "prefix longer than 32 bins");
  }
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

void SliceDecoder::residual_coding(int log2, int c, int scan_idx, std::int32_t* coeffs, bool& tskip,
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
  const int bit_depth = c ? sps_.bit_depth_chroma : sps_.bit_depth_luma;
  const Dequantizer scale(
      log2, c == 0 ? qp_y_ + sps_.qp_bd_offset_y() : chroma_qp(c), bit_depth,
      scaling_on_ && !(tskip && n > 4) ? scaling_.m[log2 - 2][c].data() : nullptr);

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

  const auto& scans = scan_tables();
  const int log2_sb = log2 - 2;
  const int nsb = 1 << log2_sb;
  const auto& sb_scan = scans.order[log2_sb][scan_idx];
  const auto& pos_scan = scans.order[2][scan_idx];

  // The scan positions of the sub-block and of the coefficient inside it.
  int last_sb = (1 << (2 * log2_sb)) - 1;
  while (last_sb >= 0 && (sb_scan[last_sb].x != last_x >> 2 || sb_scan[last_sb].y != last_y >> 2))
    --last_sb;
  int last_pos = 15;
  while (last_pos >= 0 &&
         (pos_scan[last_pos].x != (last_x & 3) || pos_scan[last_pos].y != (last_y & 3)))
    --last_pos;
  if (last_sb < 0 || last_pos < 0)
    fail("last_sig_coeff_prefix", "position outside the transform block");

  std::uint8_t csbf[8][8] = {};
  int greater1_ctx = 1;
  bool first_sb = true;
  const bool sdh_allowed = pps_.sign_data_hiding && !transquant_bypass_;

  for (int i = last_sb; i >= 0; --i) {
    const int xs = sb_scan[i].x, ys = sb_scan[i].y;
    bool infer_dc = false;
    if (i < last_sb && i > 0) {
      const int right = xs + 1 < nsb ? csbf[xs + 1][ys] : 0;
      const int below = ys + 1 < nsb ? csbf[xs][ys + 1] : 0;
      csbf[xs][ys] = static_cast<std::uint8_t>(
          cabac.decode(ctx_[kCtxCodedSubBlock + std::min(right + below, 1) + (c ? 2 : 0)]));
      infer_dc = true;
    } else {
      csbf[xs][ys] = 1;
    }
    if (!csbf[xs][ys]) continue;

    int sig_pos[16];  // scan positions of the significant coefficients, decoding order
    int nsig = 0;
    int start = 15;
    if (i == last_sb) {
      sig_pos[nsig++] = last_pos;
      start = last_pos - 1;
    }
    const int right = xs + 1 < nsb ? csbf[xs + 1][ys] : 0;
    const int below = ys + 1 < nsb ? csbf[xs][ys + 1] : 0;
    const int prev_csbf = right + 2 * below;
    const std::uint8_t* sig_ctx =
        sig_ctx_tables().ctx[log2 - 2][c ? 1 : 0][scan_idx][prev_csbf][xs + ys == 0 ? 1 : 0];
    for (int p = start; p >= 0; --p) {
      if (p == 0 && infer_dc) {
        sig_pos[nsig++] = 0;
        break;
      }
      if (cabac.decode(ctx_[sig_ctx[p]])) {
        sig_pos[nsig++] = p;
        infer_dc = false;
      }
    }
    if (nsig == 0) continue;

    int ctx_set = (i == 0 || c > 0) ? 0 : 2;
    if (!first_sb && greater1_ctx == 0) ++ctx_set;
    first_sb = false;
    greater1_ctx = 1;
    int g1[16] = {}, g2[16] = {};
    int first_g1 = -1;
    for (int k = 0; k < std::min(nsig, 8); ++k) {
      g1[k] = cabac.decode(ctx_[kCtxGreater1 + ctx_set * 4 + greater1_ctx + (c ? 16 : 0)]);
      if (g1[k]) {
        greater1_ctx = 0;
        if (first_g1 < 0) first_g1 = k;
      } else if (greater1_ctx > 0 && greater1_ctx < 3) {
        ++greater1_ctx;
      }
    }
    if (first_g1 >= 0) g2[first_g1] = cabac.decode(ctx_[kCtxGreater2 + ctx_set + (c ? 4 : 0)]);
    const bool sign_hidden = sdh_allowed && sig_pos[0] - sig_pos[nsig - 1] > 3;
    const int coded_signs = sign_hidden ? nsig - 1 : nsig;
    const std::uint32_t signs = cabac.bypass_bits(coded_signs);
    int rice = 0, sum_abs = 0;
    for (int k = 0; k < nsig; ++k) {
      const int base = 1 + g1[k] + g2[k];
      int abs_level = base;
      if (base == (k < 8 ? (k == first_g1 ? 3 : 2) : 1)) {
        abs_level += static_cast<int>(coeff_abs_level_remaining(cabac, rice));
        if (abs_level > 3 * (1 << rice)) rice = std::min(rice + 1, 4);
        if (abs_level > 32768) fail("coeff_abs_level_remaining", "coefficient beyond 16 bits");
      }
      int v = abs_level;
      if (k < coded_signs) {
        if ((signs >> (coded_signs - 1 - k)) & 1) v = -v;
      }
      sum_abs += abs_level;
      if (sign_hidden && k == nsig - 1 && (sum_abs & 1)) v = -v;
      const int p = sig_pos[k];
      const int x = (xs << 2) + pos_scan[p].x, y = (ys << 2) + pos_scan[p].y;
      const std::int32_t level = std::clamp(v, -32768, 32767);
      coeffs[y * n + x] = transquant_bypass_ ? level : scale(level, y * n + x);
      cols = std::max(cols, x + 1);
      rows = std::max(rows, y + 1);
    }
  }
  cabac_ = cabac;
}

}  // namespace sigpu::hevc
