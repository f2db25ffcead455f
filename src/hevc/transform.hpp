// The CPU's inverse transforms (8.6.4): DST 4x4, DCT 4 to 32, transform skip, with the
// specification's integer arithmetic and intermediate clipping (the formulas and matrices of
// tu_residual.hpp, shared with the GPU), and the addition of a residual to the prediction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

/// Residual from scaled coefficients: inverse DST (dst) or DCT, in place.
void inverse_transform(std::int32_t* c, int log2, bool dst, int bit_depth);
/// The same from `in` to `out` (which may be `in`) when every non-zero coefficient is known to
/// lie in the first `cols` columns and the first `rows` rows (the work shrinks with that region).
void inverse_transform(const std::int32_t* in, std::int32_t* out, int log2, bool dst, int bit_depth,
                       int cols, int rows);
/// The same without the hand-written AVX2 kernels, which inverse_transform takes where the CPU
/// has AVX2: the portable twin they are tested against.
void inverse_transform_portable(const std::int32_t* in, std::int32_t* out, int log2, bool dst,
                                int bit_depth, int cols, int rows);
/// The residual, the same at every sample, of a DCT block whose only coefficient is DC.
std::int32_t inverse_dc(std::int32_t dc, int bit_depth);

/// Adds the n x n residual r (row-major) to the prediction in dst, clipping to 0..max_val.
void add_residual(std::uint16_t* dst, std::ptrdiff_t stride, const std::int32_t* r, int log2,
                  int max_val);
/// The same for a residual that is r at every sample.
void add_constant(std::uint16_t* dst, std::ptrdiff_t stride, std::int32_t r, int log2, int max_val);

/// Residual of a transform-skipped block from its scaled coefficients (out may be in).
void transform_skip_residual(const std::int32_t* in, std::int32_t* out, int log2, int bit_depth);

}  // namespace sigpu::hevc
