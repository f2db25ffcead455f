// One inter prediction sample from a PU's record, written once for host and device: the
// fractional sample interpolation of 8.5.3.3.3 (8-tap luma, 4-tap chroma, reference positions
// clamped to the picture) and the weighted sample prediction of 8.5.3.3.4 (default and
// explicit). The inter stage's CPU twin (inter_stage.hpp) and its CUDA kernel
// (cuda/inter_kernel.cuh) tile the work their own ways and take every per-sample formula from
// here. The decoder's own CPU path (inter_pred.hpp) filters whole blocks with vectorised rows;
// the tests hold it and this code to the same samples.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "hevc/records.hpp"

namespace sigpu::hevc {

// ---- inputs --------------------------------------------------------------------------------

/// A reference plane: samples, stride and size (positions outside are clamped to the edge).
struct RefPlane {
  const std::uint16_t* data = nullptr;
  int stride = 0, width = 0, height = 0;
};

/// A reference picture's planes (Y, Cb, Cr; Y only in 4:0:0).
struct RefPicture {
  RefPlane plane[3];
};

/// Explicit weighted prediction of one block (8.5.3.3.4.3): log2Wd's denominator, the weight
/// and offset (scaled to the bit depth) of the first and, bi-predicted, the second prediction.
struct ExplicitWeights {
  int log2_denom = 0;
  int w0 = 1, o0 = 0, w1 = 1, o1 = 0;
};

/// The explicit weights of component c (8.5.3.3.4.3) for a PU predicted from lists[0] (and, bi,
/// from list 1) with reference indices ref_idx, from a pred_weight_table `t` (log2_denom[luma,
/// chroma], weight and offset [list][refIdx][component]): the slice header's or InterSlice's.
template <typename Table, typename RefIdx>
SIGPU_HD ExplicitWeights explicit_weights(const Table& t, const int lists[2], const RefIdx& ref_idx,
                                          int c, bool bi) {
  ExplicitWeights e;
  e.log2_denom = t.log2_denom[c ? 1 : 0];
  e.w0 = t.weight[lists[0]][ref_idx[lists[0]]][c];
  e.o0 = t.offset[lists[0]][ref_idx[lists[0]]][c];
  if (bi) {
    e.w1 = t.weight[1][ref_idx[1]][c];
    e.o1 = t.offset[1][ref_idx[1]][c];
  }
  return e;
}

/// What the inter prediction of a slice's PUs depends on beyond their records: its reference
/// lists as indices into the picture's RefPicture array, and its pred_weight_table.
struct InterSlice {
  std::int8_t ref[2][16];      ///< [list][refIdx]: the reference picture's index, -1 if none
  std::uint8_t weighted;       ///< explicit weighted prediction (else default)
  std::uint8_t log2_denom[2];  ///< luma, chroma
  std::int16_t weight[2][16][3], offset[2][16][3];  ///< [list][refIdx][cIdx]
};

/// The picture-wide parameters.
struct InterParams {
  int bit_depth[2] = {8, 8};  ///< BitDepthY, BitDepthC
  int chroma_format = 1;      ///< chroma_format_idc: 0 or 1 (4:2:0), as the CPU inter path
};

/// The current picture's planes the prediction is written into.
struct InterPlanes {
  std::uint16_t* data[3] = {};
  int stride[3] = {};
};

/// One PuRecords entry's fields.
struct PuView {
  int x, y, w, h;
  int mv[2][2];  ///< [list][x, y], quarter luma samples
  int ref_idx[2];
  int slice;
};

/// PuRecords' arrays as pointers (host or device memory), to read one entry from.
struct PuArrays {
  const std::uint16_t *x, *y;
  const std::uint8_t *w, *h;
  const std::int16_t* mv;      ///< four per PU: mvL0 x, y, mvL1 x, y
  const std::int8_t* ref_idx;  ///< two per PU
  const std::uint16_t* slice;

  SIGPU_HD PuView operator[](std::size_t p) const {
    const std::int16_t* m = mv + 4 * p;
    return {x[p],
            y[p],
            w[p],
            h[p],
            {{m[0], m[1]}, {m[2], m[3]}},
            {ref_idx[2 * p], ref_idx[2 * p + 1]},
            slice[p]};
  }
};
static_assert(sizeof(PuRecords::mv[0]) == 4 * sizeof(std::int16_t));
static_assert(sizeof(PuRecords::ref_idx[0]) == 2 * sizeof(std::int8_t));

/// The arrays of `pu` (host memory).
inline PuArrays pu_arrays(const PuRecords& pu) {
  return {pu.x.data(),
          pu.y.data(),
          pu.w.data(),
          pu.h.data(),
          reinterpret_cast<const std::int16_t*>(pu.mv.data()),
          reinterpret_cast<const std::int8_t*>(pu.ref_idx.data()),
          pu.slice.data()};
}

// ---- interpolation (8.5.3.3.3) -------------------------------------------------------------

/// fL[frac][k] of Table 8-11 (frac in quarter samples).
SIGPU_HD constexpr int luma_tap(int frac, int k) {
  if (frac == 0) return k == 3 ? 64 : 0;
  if (frac == 2) {
    const int m = k < 4 ? k : 7 - k;  // symmetric
    return m == 0 ? -1 : m == 1 ? 4 : m == 2 ? -11 : 40;
  }
  if (frac == 3) k = 7 - k;  // fL[3] is fL[1] reversed
  switch (k) {
    case 0:
      return -1;
    case 1:
      return 4;
    case 2:
      return -10;
    case 3:
      return 58;
    case 4:
      return 17;
    case 5:
      return -5;
    case 6:
      return 1;
    default:
      return 0;
  }
}

/// fC[frac][k] of Table 8-12 (frac in eighth samples).
SIGPU_HD constexpr int chroma_tap(int frac, int k) {
  if (frac > 4) {  // fC[8 - f] is fC[f] reversed
    frac = 8 - frac;
    k = 3 - k;
  }
  switch (frac) {
    case 0:
      return k == 1 ? 64 : 0;
    case 1:
      return k == 0 || k == 3 ? -2 : k == 1 ? 58 : 10;
    case 2:
      return k == 0 ? -4 : k == 1 ? 54 : k == 2 ? 16 : -2;
    case 3:
      return k == 0 ? -6 : k == 1 ? 46 : k == 2 ? 28 : -4;
    default:
      return k == 0 || k == 3 ? -4 : 36;
  }
}

SIGPU_HD constexpr int clamp_int(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/// predSampleLX (14-bit intermediate) of the sample whose integer reference position is (x, y)
/// with fraction (fx, fy): Taps 8 for luma (quarter samples), 4 for chroma (eighth samples).
template <int Taps>
SIGPU_HD inline int interpolate_sample(const RefPlane& ref, int x, int y, int fx, int fy,
                                       int bit_depth) {
  constexpr int before = Taps / 2 - 1;
  auto tap = [](int frac, int k) { return Taps == 8 ? luma_tap(frac, k) : chroma_tap(frac, k); };
  auto at = [&](int xx, int yy) -> int {
    xx = clamp_int(xx, 0, ref.width - 1);
    yy = clamp_int(yy, 0, ref.height - 1);
    return ref.data[static_cast<std::ptrdiff_t>(yy) * ref.stride + xx];
  };
  const int shift1 = (bit_depth - 8 < 4 ? bit_depth - 8 : 4), shift3 = 14 - bit_depth;
  if (fx == 0 && fy == 0) return at(x, y) << shift3;
  if (fy == 0) {
    int sum = 0;
    for (int k = 0; k < Taps; ++k) sum += tap(fx, k) * at(x + k - before, y);
    return sum >> shift1;
  }
  if (fx == 0) {
    int sum = 0;
    for (int k = 0; k < Taps; ++k) sum += tap(fy, k) * at(x, y + k - before);
    return sum >> shift1;
  }
  int sum = 0;
  for (int n = 0; n < Taps; ++n) {
    int row = 0;
    for (int k = 0; k < Taps; ++k) row += tap(fx, k) * at(x + k - before, y + n - before);
    sum += tap(fy, n) * (row >> shift1);
  }
  return sum >> 6;
}

// ---- weighted sample prediction (8.5.3.3.4) ------------------------------------------------

/// The picture sample from one (bi false) or two 14-bit predictions: default weighting when
/// `w` is null, else explicit.
SIGPU_HD inline int weighted_sample(int p0, int p1, bool bi, int bit_depth,
                                    const ExplicitWeights* w) {
  const int max_val = (1 << bit_depth) - 1, shift1 = 14 - bit_depth;
  int v;
  if (!w) {
    if (!bi) {
      v = (p0 + (shift1 > 0 ? 1 << (shift1 - 1) : 0)) >> shift1;
    } else {
      const int shift2 = 15 - bit_depth;
      v = (p0 + p1 + (1 << (shift2 - 1))) >> shift2;
    }
  } else {
    const int log2_wd = w->log2_denom + shift1;
    if (bi)
      v = (p0 * w->w0 + p1 * w->w1 + ((w->o0 + w->o1 + 1) << log2_wd)) >> (log2_wd + 1);
    else if (log2_wd >= 1)
      v = ((p0 * w->w0 + (1 << (log2_wd - 1))) >> log2_wd) + w->o0;
    else
      v = p0 * w->w0 + w->o0;
  }
  return clamp_int(v, 0, max_val);
}

// ---- one sample of a PU --------------------------------------------------------------------

/// The samples of component c of PU `pu` (4:2:0 chroma halves both sides).
SIGPU_HD inline int pu_comp_width(const PuView& pu, int c) {
  return c ? pu.w >> 1 : pu.w;
}
SIGPU_HD inline int pu_comp_height(const PuView& pu, int c) {
  return c ? pu.h >> 1 : pu.h;
}

/// The prediction of sample (i, j) of component c of `pu`, from the reference pictures `refs`
/// its slice `s` names, written to `out`.
SIGPU_HD inline void predict_pu_sample(const PuView& pu, int c, int i, int j, const InterSlice& s,
                                       const RefPicture* refs, const InterParams& p,
                                       const InterPlanes& out) {
  const int bit_depth = p.bit_depth[c ? 1 : 0];
  const int cx = (c ? pu.x >> 1 : pu.x) + i, cy = (c ? pu.y >> 1 : pu.y) + j;
  int pred[2] = {0, 0}, lists[2] = {0, 0}, n = 0;
  for (int l = 0; l < 2; ++l) {
    if (pu.ref_idx[l] < 0) continue;
    const RefPlane& ref = refs[s.ref[l][pu.ref_idx[l]]].plane[c];
    const int mvx = pu.mv[l][0], mvy = pu.mv[l][1];
    pred[n] = c == 0 ? interpolate_sample<8>(ref, cx + (mvx >> 2), cy + (mvy >> 2), mvx & 3,
                                             mvy & 3, bit_depth)
                     : interpolate_sample<4>(ref, cx + (mvx >> 3), cy + (mvy >> 3), mvx & 7,
                                             mvy & 7, bit_depth);
    lists[n++] = l;
  }
  const bool bi = n == 2;
  int v;
  if (!s.weighted) {
    v = weighted_sample(pred[0], pred[1], bi, bit_depth, nullptr);
  } else {
    const ExplicitWeights e = explicit_weights(s, lists, pu.ref_idx, c, bi);
    v = weighted_sample(pred[0], pred[1], bi, bit_depth, &e);
  }
  out.data[c][static_cast<std::ptrdiff_t>(cy) * out.stride[c] + cx] = static_cast<std::uint16_t>(v);
}

}  // namespace sigpu::hevc
