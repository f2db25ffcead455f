// The reconstruction stage: a CTU's samples from its records (records.hpp) alone. Per coding
// unit in decoding order: PCM samples, or motion compensation of its prediction units (8.5.3.3),
// then per transform block intra prediction (8.4.4.2) where intra, dequantisation (8.6.2) and
// the inverse transform (8.6.4) of its coefficients added to the prediction.
#include <algorithm>

#include "hevc/inter_pred.hpp"
#include "hevc/intra_pred.hpp"
#include "hevc/residual_stage.hpp"
#include "hevc/slice_decoder.hpp"
#include "hevc/transform.hpp"

namespace sigpu::hevc {
void SliceDecoder::reconstruct_ctu(std::size_t cu_begin) {
  const CuRecords& cu = rec_.cu;
  const PuRecords& pu = rec_.pu;
  const std::size_t n_cu = cu.size();
  for (std::size_t i = cu_begin; i < n_cu; ++i) {
    const bool last = i + 1 == n_cu;
    const int flags = cu.flags[i];
    if (flags & kCuPcm) {
      copy_pcm(i);
    } else if (!(flags & kCuIntra)) {
      const std::size_t end = last ? pu.size() : cu.pu_begin[i + 1];
      for (std::size_t p = cu.pu_begin[i]; p < end; ++p) {
        MvField m;
        for (int l = 0; l < 2; ++l) {
          m.ref_idx[l] = pu.ref_idx[p][static_cast<std::size_t>(l)];
          m.mv[l][0] = pu.mv[p][static_cast<std::size_t>(2 * l)];
          m.mv[l][1] = pu.mv[p][static_cast<std::size_t>(2 * l + 1)];
        }
        predict_inter(pu.x[p], pu.y[p], pu.w[p], pu.h[p], m);
      }
    }
    const std::size_t end = last ? rec_.tu.size() : cu.tu_begin[i + 1];
    for (std::size_t t = cu.tu_begin[i]; t < end; ++t) reconstruct_tu(t);
  }
}

void SliceDecoder::reconstruct_tu(std::size_t t) {
  const TuRecords& tu = rec_.tu;
  const int c = tu.comp[t], x = tu.x[t], y = tu.y[t];
  const int stride = pic_.width[c];
  std::uint16_t* dst = pic_.planes[c].data() + static_cast<std::size_t>(y) * stride + x;
  if (tu.flags[t] & kTuIntra) predict_intra(c, x, y, tu.log2[t], tu.mode[t], dst);
  if (tu.flags[t] & kTuCoded) add_recorded_residual(t, dst, stride);
}

void SliceDecoder::copy_pcm(std::size_t i) {
  const CuRecords& cu = rec_.cu;
  const std::uint16_t* s = rec_.pcm.data() + cu.pcm_begin[i];
  const int n = 1 << cu.log2[i];
  auto copy_block = [&](int c, int x, int y, int size) {
    const int stride = pic_.width[c];
    std::uint16_t* d = pic_.planes[c].data() + static_cast<std::size_t>(y) * stride + x;
    for (int j = 0; j < size; ++j, s += size)
      std::copy_n(s, size, d + static_cast<std::size_t>(j) * stride);
  };
  copy_block(0, cu.x[i], cu.y[i], n);
  if (sps_.chroma_format_idc != 0) {
    copy_block(1, cu.x[i] / 2, cu.y[i] / 2, n / 2);
    copy_block(2, cu.x[i] / 2, cu.y[i] / 2, n / 2);
  }
}

void SliceDecoder::predict_intra(int c, int x, int y, int log2, int mode, std::uint16_t* dst) {
  const int n = 1 << log2;
  const int shift = c ? 1 : 0;  // 4:2:0
  const int unit = c ? 2 : 4;   // samples per 4x4 luma block
  const int bit_depth = c ? sps_.bit_depth_chroma : sps_.bit_depth_luma;
  auto& plane = pic_.planes[c];
  const int stride = pic_.width[c];
  // The block whose availability rules apply: for the chroma of four 4x4 luma blocks, their
  // 8x8 parent.
  const int cur_x = x << shift, cur_y = y << shift;
  auto sample = [&](int sx, int sy) {
    return static_cast<std::int32_t>(plane[static_cast<std::size_t>(sy) * stride + sx]);
  };

  // Reference samples (8.4.4.2.2), available or not per 4x4 luma block: `unit` samples.
  const int units = 2 * n / unit;  // per side
  // Bit u: the u-th block of the column on the left (top down) and of the row above (left to
  // right) is available.
  std::uint32_t left_av, top_av;
  bool corner;
  if (c == 2) {  // Cr right after Cb, the same positions
    left_av = cb_av_.left;
    top_av = cb_av_.top;
    corner = cb_av_.corner;
  } else {
    const std::uint32_t z_cur = geo_.zscan_in_ctb(cur_x, cur_y, sps_.log2_ctb);
    // The neighbours beside the block (the first half of each side) lie in one CTB and precede
    // the block in z-scan order (it is a quadtree node inside the picture), so they share the
    // first one's availability; only those below-left and above-right need asking one by one.
    const std::uint32_t half = (1u << (units / 2)) - 1;
    left_av = available(cur_x, cur_y, z_cur, (x - 1) << shift, y << shift) ? half : 0;
    top_av = available(cur_x, cur_y, z_cur, x << shift, (y - 1) << shift) ? half : 0;
    for (int u = units / 2; u < units; ++u) {
      left_av |=
          std::uint32_t{available(cur_x, cur_y, z_cur, (x - 1) << shift, (y + u * unit) << shift)}
          << u;
      top_av |=
          std::uint32_t{available(cur_x, cur_y, z_cur, (x + u * unit) << shift, (y - 1) << shift)}
          << u;
    }
    corner = available(cur_x, cur_y, z_cur, (x - 1) << shift, (y - 1) << shift);
    if (pps_.constrained_intra_pred && pic_.inter) {
      // 8.4.4.2.2: samples of inter coding units are not available for intra prediction.
      auto intra_at = [&](int xn, int yn) { return !pic_.motion_at(xn, yn).inter(); };
      for (int u = 0; u < units; ++u) {
        if (((left_av >> u) & 1) && !intra_at((x - 1) << shift, (y + u * unit) << shift))
          left_av &= ~(1u << u);
        if (((top_av >> u) & 1) && !intra_at((x + u * unit) << shift, (y - 1) << shift))
          top_av &= ~(1u << u);
      }
      if (corner && !intra_at((x - 1) << shift, (y - 1) << shift)) corner = false;
    }
    if (c == 1) cb_av_ = {left_av, top_av, corner};
  }
  std::int32_t ref[4 * 32 + 1];
  if (!left_av && !top_av && !corner) {
    std::fill_n(ref, 4 * n + 1, 1 << (bit_depth - 1));
  } else {
    // Each run of available blocks is copied in one loop (the top row's contiguous).
    auto for_runs = [unit](std::uint32_t av, auto&& copy) {
      while (av) {
        const int u = __builtin_ctz(av);
        const int e = u + __builtin_ctz(~(av >> u));
        copy(u * unit, e * unit);
        av &= ~0u << e;
      }
    };
    for_runs(left_av, [&](int a, int b) {
      const std::uint16_t* s = plane.data() + static_cast<std::size_t>(y + a) * stride + (x - 1);
      for (int j = a; j < b; ++j)
        ref[2 * n - 1 - j] = s[static_cast<std::ptrdiff_t>(j - a) * stride];
    });
    if (corner) ref[2 * n] = sample(x - 1, y - 1);
    for_runs(top_av, [&](int a, int b) {
      const std::uint16_t* s = plane.data() + static_cast<std::size_t>(y - 1) * stride + x;
      for (int j = a; j < b; ++j) ref[2 * n + 1 + j] = s[j];
    });
    const std::uint32_t all = (1u << units) - 1;
    if (left_av != all || top_av != all || !corner) {
      // Substitution in ref's order, a block at a time: the bottom of the left column up, the
      // corner, the top row left to right. Blocks before the first available sample take it;
      // later ones take the sample just before them.
      std::int32_t carry;
      int first = units - 1;
      while (first >= 0 && !((left_av >> first) & 1)) --first;
      if (first >= 0) {
        carry = ref[2 * n - (first + 1) * unit];
      } else if (corner) {
        carry = ref[2 * n];
      } else {
        first = 0;
        while (!((top_av >> first) & 1)) ++first;
        carry = ref[2 * n + 1 + first * unit];
      }
      for (int u = units - 1; u >= 0; --u) {
        std::int32_t* r = ref + 2 * n - (u + 1) * unit;
        if ((left_av >> u) & 1)
          carry = r[unit - 1];
        else
          std::fill_n(r, unit, carry);
      }
      if (corner)
        carry = ref[2 * n];
      else
        ref[2 * n] = carry;
      for (int u = 0; u < units; ++u) {
        std::int32_t* r = ref + 2 * n + 1 + u * unit;
        if ((top_av >> u) & 1)
          carry = r[unit - 1];
        else
          std::fill_n(r, unit, carry);
      }
    }
  }
  IntraParams p;
  p.log2 = log2;
  p.mode = mode;
  p.luma = c == 0;
  p.filter_refs = !sps_.intra_smoothing_disabled;
  p.strong_smoothing = sps_.strong_intra_smoothing;
  p.bit_depth = bit_depth;
  intra_predict(ref, p, dst, stride);
}

void SliceDecoder::add_recorded_residual(std::size_t t, std::uint16_t* dst, int stride) {
  const TuView tu = tu_arrays(rec_.tu)[t];
  const BlockResidual r = residual_.compute(tu, rec_.coeffs.data() + tu.coeff_begin, params_);
  const int max_val = (1 << tu_bit_depth(params_, tu)) - 1;
  if (r.samples)
    add_residual(dst, stride, r.samples, tu.log2, max_val);
  else
    add_constant(dst, stride, r.value, tu.log2, max_val);
}

void SliceDecoder::predict_inter(int x, int y, int w, int h, const MvField& m) {
  const bool bi = m.ref_idx[0] >= 0 && m.ref_idx[1] >= 0;
  const bool weighted = sh_.weighted;
  const int comps = sps_.chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    const int sh = c ? 1 : 0;
    const int cw = w >> sh, ch = h >> sh, cx = x >> sh, cy = y >> sh;
    const int bit_depth = c ? sps_.bit_depth_chroma : sps_.bit_depth_luma;
    const std::int16_t* pred[2] = {nullptr, nullptr};
    int lists[2], n = 0;
    for (int l = 0; l < 2; ++l) {
      if (m.ref_idx[l] < 0) continue;
      const DecodedPicture& ref = *refs_->pic[l][m.ref_idx[l]];
      const RefPlane plane{ref.planes[c].data(), ref.width[c], ref.width[c], ref.height[c]};
      const int mvx = m.mv[l][0], mvy = m.mv[l][1];
      std::int16_t* out = pred_buf_[n];
      if (c == 0)
        interpolate(plane, cx + (mvx >> 2), cy + (mvy >> 2), mvx & 3, mvy & 3, cw, ch, true,
                    bit_depth, out);
      else
        interpolate(plane, cx + (mvx >> 3), cy + (mvy >> 3), mvx & 7, mvy & 7, cw, ch, false,
                    bit_depth, out);
      pred[n] = out;
      lists[n++] = l;
    }
    std::uint16_t* dst = pic_.planes[c].data() + static_cast<std::size_t>(cy) * pic_.width[c] + cx;
    if (!weighted) {
      weighted_prediction(pred[0], bi ? pred[1] : nullptr, cw, ch, bit_depth, nullptr, dst,
                          pic_.width[c]);
      continue;
    }
    const ExplicitWeights e = explicit_weights(sh_.weights, lists, m.ref_idx, c, bi);
    weighted_prediction(pred[0], bi ? pred[1] : nullptr, cw, ch, bit_depth, &e, dst, pic_.width[c]);
  }
}

}  // namespace sigpu::hevc
