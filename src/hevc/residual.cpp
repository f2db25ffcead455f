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

}  // namespace

int SliceDecoder::last_sig_prefix(int log2, int c, int ctx_base) {
  const int offset = c == 0 ? 3 * (log2 - 2) + ((log2 - 1) >> 2) : 15;
  const int shift = c == 0 ? (log2 + 1) >> 2 : log2 - 2;
  const int max = (log2 << 1) - 1;
  int v = 0;
  while (v < max && cabac_.decode(ctx_[ctx_base + offset + (v >> shift)])) ++v;
  return v;
}

std::uint32_t SliceDecoder::coeff_abs_level_remaining(int rice) {
  int prefix = 0;
  while (cabac_.bypass()) {
    if (++prefix > 32) fail("coeff_abs_level_remaining", "prefix longer than 32 bins");
  }
  std::uint64_t v;
  if (prefix <= 3) {
    v = (static_cast<std::uint64_t>(prefix) << rice) + cabac_.bypass_bits(rice);
  } else {
    const int pm3 = prefix - 3;
    if (pm3 + rice > 20)
      fail("coeff_abs_level_remaining", "value beyond the 16-bit coefficient range");
    v = ((static_cast<std::uint64_t>(1) << pm3) + 2) << rice;
    v += cabac_.bypass_bits(pm3 + rice);
  }
  if (v > 32768) fail("coeff_abs_level_remaining", "value beyond the 16-bit coefficient range");
  return static_cast<std::uint32_t>(v);
}

void SliceDecoder::residual_coding(int log2, int c, int scan_idx, std::int32_t* coeffs,
                                   bool& tskip) {
  const int n = 1 << log2;
  std::memset(coeffs, 0, sizeof(std::int32_t) * static_cast<std::size_t>(n) * n);
  tskip = false;
  if (pps_.transform_skip && !transquant_bypass_ && log2 <= pps_.log2_max_transform_skip_size)
    tskip = cabac_.decode(ctx_[kCtxTransformSkip + (c ? 1 : 0)]);

  int last_x = last_sig_prefix(log2, c, kCtxLastX);
  int last_y = last_sig_prefix(log2, c, kCtxLastY);
  if (last_x > 3) {
    const int k = (last_x >> 1) - 1;
    last_x = (1 << k) * (2 + (last_x & 1)) + static_cast<int>(cabac_.bypass_bits(k));
  }
  if (last_y > 3) {
    const int k = (last_y >> 1) - 1;
    last_y = (1 << k) * (2 + (last_y & 1)) + static_cast<int>(cabac_.bypass_bits(k));
  }
  if (scan_idx == 2) std::swap(last_x, last_y);

  const auto& scans = scan_tables();
  const int log2_sb = log2 - 2;
  const int nsb = 1 << log2_sb;
  const auto& sb_scan = scans.order[log2_sb][scan_idx];
  const auto& pos_scan = scans.order[2][scan_idx];

  int last_sb = (1 << (2 * log2_sb)) - 1;
  int last_pos = 16;
  for (;;) {
    if (last_pos == 0) {
      last_pos = 16;
      if (--last_sb < 0) fail("last_sig_coeff_prefix", "position outside the transform block");
    }
    --last_pos;
    const int xc = (sb_scan[last_sb].x << 2) + pos_scan[last_pos].x;
    const int yc = (sb_scan[last_sb].y << 2) + pos_scan[last_pos].y;
    if (xc == last_x && yc == last_y) break;
  }

  std::uint8_t csbf[8][8] = {};
  int greater1_ctx = 1;
  bool first_sb = true;
  const bool sdh_allowed = pps_.sign_data_hiding && !transquant_bypass_;
  const int c_off = c ? 27 : 0;

  for (int i = last_sb; i >= 0; --i) {
    const int xs = sb_scan[i].x, ys = sb_scan[i].y;
    bool infer_dc = false;
    if (i < last_sb && i > 0) {
      const int right = xs + 1 < nsb ? csbf[xs + 1][ys] : 0;
      const int below = ys + 1 < nsb ? csbf[xs][ys + 1] : 0;
      csbf[xs][ys] = static_cast<std::uint8_t>(
          cabac_.decode(ctx_[kCtxCodedSubBlock + std::min(right + below, 1) + (c ? 2 : 0)]));
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
    for (int p = start; p >= 0; --p) {
      const int xp = pos_scan[p].x, yp = pos_scan[p].y;
      const int xc = (xs << 2) + xp, yc = (ys << 2) + yp;
      if (p == 0 && infer_dc) {
        sig_pos[nsig++] = 0;
        break;
      }
      int sig_ctx;
      if (log2 == 2) {
        sig_ctx = kCtxIdxMap4x4[(yc << 2) + xc];
      } else if (xc + yc == 0) {
        sig_ctx = 0;
      } else {
        if (prev_csbf == 0)
          sig_ctx = (xp + yp == 0) ? 2 : (xp + yp < 3) ? 1 : 0;
        else if (prev_csbf == 1)
          sig_ctx = yp == 0 ? 2 : (yp == 1 ? 1 : 0);
        else if (prev_csbf == 2)
          sig_ctx = xp == 0 ? 2 : (xp == 1 ? 1 : 0);
        else
          sig_ctx = 2;
        if (c == 0) {
          if (xs + ys > 0) sig_ctx += 3;
          sig_ctx += log2 == 3 ? (scan_idx == 0 ? 9 : 15) : 21;
        } else {
          sig_ctx += log2 == 3 ? 9 : 12;
        }
      }
      if (cabac_.decode(ctx_[kCtxSig + c_off + sig_ctx])) {
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
      g1[k] = cabac_.decode(ctx_[kCtxGreater1 + ctx_set * 4 + greater1_ctx + (c ? 16 : 0)]);
      if (g1[k]) {
        greater1_ctx = 0;
        if (first_g1 < 0) first_g1 = k;
      } else if (greater1_ctx > 0 && greater1_ctx < 3) {
        ++greater1_ctx;
      }
    }
    if (first_g1 >= 0) g2[first_g1] = cabac_.decode(ctx_[kCtxGreater2 + ctx_set + (c ? 4 : 0)]);
    const bool sign_hidden = sdh_allowed && sig_pos[0] - sig_pos[nsig - 1] > 3;
    const int coded_signs = sign_hidden ? nsig - 1 : nsig;
    const std::uint32_t signs = cabac_.bypass_bits(coded_signs);
    int rice = 0, sum_abs = 0;
    for (int k = 0; k < nsig; ++k) {
      const int base = 1 + g1[k] + g2[k];
      int abs_level = base;
      if (base == (k < 8 ? (k == first_g1 ? 3 : 2) : 1)) {
        abs_level += static_cast<int>(coeff_abs_level_remaining(rice));
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
      coeffs[y * n + x] = std::clamp(v, -32768, 32767);
    }
  }
}

}  // namespace sigpu::hevc
