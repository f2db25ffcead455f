// Scaling (8.6.2, 8.6.3) and the inverse transforms (8.6.4): DST 4x4, DCT 4 to 32, transform
// skip, written as the specification's integer arithmetic with its intermediate clipping.
#pragma once

#include <cstdint>

namespace sigpu::hevc {

/// Scales TransCoeffLevel in place to d[x][y] (row-major [y][x], n = 1 << log2). `factors` is
/// ScalingFactor for this size and matrix, or null for the flat m = 16.
void dequantize(std::int32_t* c, int log2, int qp, int bit_depth, const std::uint8_t* factors);

/// Residual from scaled coefficients: inverse DST (dst) or DCT, in place.
void inverse_transform(std::int32_t* c, int log2, bool dst, int bit_depth);

/// Residual of a transform-skipped block, in place.
void transform_skip_residual(std::int32_t* c, int log2, int bit_depth);

}  // namespace sigpu::hevc
