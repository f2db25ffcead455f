#include "hevc/inter_pred.hpp"

#include <algorithm>

#include "hevc/simd.hpp"

namespace sigpu::hevc {
namespace {

// fL (Table 8-11) and fC (Table 8-12) by fractional position, as tables for the block filters.
template <int Fractions, int Taps>
struct TapTable {
  int c[Fractions][Taps];
};
constexpr auto kLumaTaps = [] {
  TapTable<4, 8> t{};
  for (int f = 0; f < 4; ++f)
    for (int k = 0; k < 8; ++k) t.c[f][k] = luma_tap(f, k);
  return t;
}();
constexpr auto kChromaTaps = [] {
  TapTable<8, 4> t{};
  for (int f = 0; f < 8; ++f)
    for (int k = 0; k < 4; ++k) t.c[f][k] = chroma_tap(f, k);
  return t;
}();

// One filtered row: out[i] = sum_k c[k] s[i + k] >> shift, for i < w. The taps are constants of
// the loop, so it vectorises over i.
template <int Taps, typename In>
inline void filter_row(const In* s, std::ptrdiff_t step, const int (&c)[Taps], int w, int shift,
                       std::int16_t* out) {
  for (int i = 0; i < w; ++i) {
    int sum = 0;
    for (int k = 0; k < Taps; ++k) sum += c[k] * s[i + k * step];
    out[i] = static_cast<std::int16_t>(sum >> shift);
  }
}

template <int Taps>
SIGPU_HEVC_SIMD_CLONES void interpolate_taps(const RefPlane& ref, int x, int y, int fx, int fy,
                                             int w, int h, const int* hcoef, const int* vcoef,
                                             int bit_depth, std::int16_t* dst) {
  constexpr int before = Taps / 2 - 1;
  constexpr int kMax = 64 + Taps - 1;
  const int sw = w + Taps - 1, sh = h + Taps - 1;
  const int x0 = x - before, y0 = y - before;
  // A block whose filter margins lie inside the reference reads it in place; one that reaches
  // over an edge reads a copy with the edge samples repeated (8.5.3.3.3.1's Clip3 on xInt, yInt).
  std::uint16_t copy[kMax * kMax];
  const std::uint16_t* src;
  std::ptrdiff_t stride;
  if (x0 >= 0 && y0 >= 0 && x0 + sw <= ref.width && y0 + sh <= ref.height) {
    src = ref.data + static_cast<std::ptrdiff_t>(y0) * ref.stride + x0;
    stride = ref.stride;
  } else {
    for (int j = 0; j < sh; ++j) {
      const int yy = std::clamp(y0 + j, 0, ref.height - 1);
      const std::uint16_t* row = ref.data + static_cast<std::ptrdiff_t>(yy) * ref.stride;
      for (int i = 0; i < sw; ++i) copy[j * kMax + i] = row[std::clamp(x0 + i, 0, ref.width - 1)];
    }
    src = copy;
    stride = kMax;
  }
  const int shift1 = std::min(4, bit_depth - 8), shift3 = 14 - bit_depth;
  int hc[Taps], vc[Taps];
  std::copy(hcoef, hcoef + Taps, hc);
  std::copy(vcoef, vcoef + Taps, vc);
  if (fx == 0 && fy == 0) {
    for (int j = 0; j < h; ++j) {
      const std::uint16_t* s = src + (j + before) * stride + before;
      for (int i = 0; i < w; ++i) dst[j * w + i] = static_cast<std::int16_t>(s[i] << shift3);
    }
    return;
  }
  if (fy == 0) {
    for (int j = 0; j < h; ++j)
      filter_row(src + (j + before) * stride, 1, hc, w, shift1, dst + j * w);
    return;
  }
  if (fx == 0) {
    for (int j = 0; j < h; ++j)
      filter_row(src + j * stride + before, stride, vc, w, shift1, dst + j * w);
    return;
  }
  // The horizontal pass's samples fit 16 bits at every bit depth up to 12 (8.5.3.3.3.1's shift1).
  std::int16_t tmp[kMax * 64];
  for (int j = 0; j < sh; ++j) filter_row(src + j * stride, 1, hc, w, shift1, tmp + j * 64);
  for (int j = 0; j < h; ++j) filter_row(tmp + j * 64, 64, vc, w, 6, dst + j * w);
}

}  // namespace

void interpolate(const RefPlane& ref, int x, int y, int fx, int fy, int w, int h, bool luma,
                 int bit_depth, std::int16_t* dst) {
  if (luma)
    interpolate_taps<8>(ref, x, y, fx, fy, w, h, kLumaTaps.c[fx], kLumaTaps.c[fy], bit_depth, dst);
  else
    interpolate_taps<4>(ref, x, y, fx, fy, w, h, kChromaTaps.c[fx], kChromaTaps.c[fy], bit_depth,
                        dst);
}

SIGPU_HEVC_SIMD_CLONES void weighted_prediction(const std::int16_t* src0, const std::int16_t* src1,
                                                int w, int h, int bit_depth,
                                                const ExplicitWeights* wt, std::uint16_t* dst,
                                                std::ptrdiff_t dst_stride) {
  const int max_val = (1 << bit_depth) - 1;
  auto put = [&](auto&& value) {
    for (int j = 0; j < h; ++j) {
      std::uint16_t* d = dst + j * dst_stride;
      for (int i = 0; i < w; ++i)
        d[i] = static_cast<std::uint16_t>(std::clamp(value(j * w + i), 0, max_val));
    }
  };
  const int shift1 = 14 - bit_depth;
  if (!wt) {
    if (!src1) {
      const int offset1 = shift1 > 0 ? 1 << (shift1 - 1) : 0;
      put([&](int k) { return (src0[k] + offset1) >> shift1; });
    } else {
      const int shift2 = 15 - bit_depth, offset2 = 1 << (shift2 - 1);
      put([&](int k) { return (src0[k] + src1[k] + offset2) >> shift2; });
    }
    return;
  }
  const int log2_wd = wt->log2_denom + shift1;
  if (!src1) {
    if (log2_wd >= 1)
      put([&](int k) { return ((src0[k] * wt->w0 + (1 << (log2_wd - 1))) >> log2_wd) + wt->o0; });
    else
      put([&](int k) { return src0[k] * wt->w0 + wt->o0; });
    return;
  }
  put([&](int k) {
    return (src0[k] * wt->w0 + src1[k] * wt->w1 + ((wt->o0 + wt->o1 + 1) << log2_wd)) >>
           (log2_wd + 1);
  });
}

}  // namespace sigpu::hevc
