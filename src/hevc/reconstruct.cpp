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
  if (tu.flags[t] & kTuIntra) predict_intra(t, dst);
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

void SliceDecoder::predict_intra(std::size_t t, std::uint16_t* dst) {
  const TuRecords& tu = rec_.tu;
  const int c = tu.comp[t];
  const int bit_depth = c ? sps_.bit_depth_chroma : sps_.bit_depth_luma;
  const int stride = pic_.width[c];
  std::int32_t ref[4 * 32 + 1];
  gather_intra_refs(pic_.planes[c].data(), stride, tu.x[t], tu.y[t], tu.log2[t], avail_unit(c),
                    tu.avail[t], tu.flags[t] & kTuCorner, bit_depth, ref);
  IntraParams p;
  p.log2 = tu.log2[t];
  p.mode = tu.mode[t];
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
