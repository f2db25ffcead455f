#include "hevc/inter_pred.hpp"

#include <algorithm>

namespace sigpu::hevc {
namespace {

// fL (Table 8-11) and fC (Table 8-12) by fractional position.
constexpr int kLumaTaps[4][8] = {{0, 0, 0, 64, 0, 0, 0, 0},
                                 {-1, 4, -10, 58, 17, -5, 1, 0},
                                 {-1, 4, -11, 40, 40, -11, 4, -1},
                                 {0, 1, -5, 17, 58, -10, 4, -1}};
constexpr int kChromaTaps[8][4] = {{0, 64, 0, 0},    {-2, 58, 10, -2}, {-4, 54, 16, -2},
                                   {-6, 46, 28, -4}, {-4, 36, 36, -4}, {-4, 28, 46, -6},
                                   {-2, 16, 54, -4}, {-2, 10, 58, -2}};

template <int Taps>
void interpolate_taps(const RefPlane& ref, int x, int y, int fx, int fy, int w, int h,
                      const int* hcoef, const int* vcoef, int bit_depth, std::int16_t* dst) {
  constexpr int before = Taps / 2 - 1;
  // The source block with the filter's margins, edges clamped (8.5.3.3.3.1's Clip3 on xInt, yInt).
  constexpr int kMax = 64 + Taps - 1;
  std::int32_t src[kMax * kMax];
  const int sw = w + Taps - 1, sh = h + Taps - 1;
  for (int j = 0; j < sh; ++j) {
    const int yy = std::clamp(y + j - before, 0, ref.height - 1);
    const std::uint16_t* row = ref.data + static_cast<std::ptrdiff_t>(yy) * ref.stride;
    for (int i = 0; i < sw; ++i)
      src[j * kMax + i] = row[std::clamp(x + i - before, 0, ref.width - 1)];
  }
  const int shift1 = std::min(4, bit_depth - 8), shift3 = 14 - bit_depth;
  if (fx == 0 && fy == 0) {
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i)
        dst[j * w + i] = static_cast<std::int16_t>(src[(j + before) * kMax + i + before] << shift3);
    return;
  }
  if (fy == 0) {
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) {
        const std::int32_t* s = src + (j + before) * kMax + i;
        int sum = 0;
        for (int k = 0; k < Taps; ++k) sum += hcoef[k] * s[k];
        dst[j * w + i] = static_cast<std::int16_t>(sum >> shift1);
      }
    return;
  }
  if (fx == 0) {
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) {
        const std::int32_t* s = src + j * kMax + i + before;
        int sum = 0;
        for (int k = 0; k < Taps; ++k) sum += vcoef[k] * s[k * kMax];
        dst[j * w + i] = static_cast<std::int16_t>(sum >> shift1);
      }
    return;
  }
  std::int32_t tmp[kMax * 64];
  for (int j = 0; j < sh; ++j)
    for (int i = 0; i < w; ++i) {
      const std::int32_t* s = src + j * kMax + i;
      int sum = 0;
      for (int k = 0; k < Taps; ++k) sum += hcoef[k] * s[k];
      tmp[j * 64 + i] = sum >> shift1;
    }
  for (int j = 0; j < h; ++j)
    for (int i = 0; i < w; ++i) {
      int sum = 0;
      for (int k = 0; k < Taps; ++k) sum += vcoef[k] * tmp[(j + k) * 64 + i];
      dst[j * w + i] = static_cast<std::int16_t>(sum >> 6);
    }
}

}  // namespace

void interpolate(const RefPlane& ref, int x, int y, int fx, int fy, int w, int h, bool luma,
                 int bit_depth, std::int16_t* dst) {
  if (luma)
    interpolate_taps<8>(ref, x, y, fx, fy, w, h, kLumaTaps[fx], kLumaTaps[fy], bit_depth, dst);
  else
    interpolate_taps<4>(ref, x, y, fx, fy, w, h, kChromaTaps[fx], kChromaTaps[fy], bit_depth, dst);
}

void weighted_prediction(const std::int16_t* src0, const std::int16_t* src1, int w, int h,
                         int bit_depth, const ExplicitWeights* wt, std::uint16_t* dst,
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
