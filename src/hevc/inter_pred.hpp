// Inter sample prediction kernels (8.5.3.3): fractional sample interpolation of luma (8-tap) and
// chroma (4-tap) into 14-bit intermediate samples, and the default and explicit weighted sample
// prediction that turns one or two of them into picture samples. Kernels see only pointers,
// strides and sizes; the slice decoder picks the blocks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hevc/inter_sample.hpp"

namespace sigpu::hevc {

/// Interpolates the w x h block whose top-left integer position is (x, y) in `ref` with fraction
/// (fx, fy) in units of 1/4 (luma) or 1/8 (chroma) sample into dst (row stride w): predSamplesLX
/// of 8.5.3.3.3. w, h <= 64.
void interpolate(const RefPlane& ref, int x, int y, int fx, int fy, int w, int h, bool luma,
                 int bit_depth, std::int16_t* dst);

/// Weighted sample prediction (8.5.3.3.4) of a w x h block into dst (stride dst_stride). src1 is
/// null for uni-prediction. Default weighting when `weights` is null, else explicit: {w0, o0,
/// w1, o1} with log2_wd = denominator (o scaled to the bit depth).
void weighted_prediction(const std::int16_t* src0, const std::int16_t* src1, int w, int h,
                         int bit_depth, const ExplicitWeights* weights, std::uint16_t* dst,
                         std::ptrdiff_t dst_stride);

}  // namespace sigpu::hevc
