// The residual stage of reconstruction (docs/design/hevc.md, "The residual stage"): every coded
// transform block's residual, dequantised and inverse transformed, from the picture's records
// alone. The CPU computes it one block at a time (ResidualBlock, which the CPU reconstruction
// adds to each block's prediction); residual_stage_cpu writes every block's into int16 planes,
// as the CUDA kernel does (residual_gpu.hpp), so that the two can be compared sample by sample.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hevc/parameter_sets.hpp"
#include "hevc/records.hpp"
#include "hevc/transform.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

/// A transform block's residual: n x n samples (row-major), or one value at every sample.
struct BlockResidual {
  const std::int32_t* samples;  ///< null when the residual is `value` everywhere
  std::int32_t value;
};

/// The CPU's residual of one transform block at a time, in buffers it reuses.
class ResidualBlock {
 public:
  /// The residual of the coded block `t`, whose coefficients (pack_coeff) are `coeffs`; its
  /// samples stay valid until the next call.
  BlockResidual compute(const TuView& t, const std::uint32_t* coeffs, const ResidualParams& p);

 private:
  std::int32_t coeffs_[32 * 32] = {};  ///< zero between blocks
  std::int32_t residual_[32 * 32];
};

/// The picture-wide parameters of a picture of `sps` and `pps`; the scaling factors, where
/// scaling lists are on, are written to `storage`, which the parameters point to.
ResidualParams residual_params(const Sps& sps, const Pps& pps, ScalingFactors& storage);

/// The residual of every coded transform block of `rec`, saturated to int16 (saturate16), into
/// `out`; samples outside coded blocks are left as they are.
void residual_stage_cpu(const PictureRecords& rec, const ResidualParams& p,
                        const ResidualPlanes& out);

/// The coded transform blocks grouped by size, for the GPU's thread blocks: their indices,
/// 4x4 blocks first, decoding order within a size; those of size log2 are
/// tu[begin[log2 - 2]] .. tu[begin[log2 - 1] - 1].
struct TuOrder {
  std::vector<std::uint32_t> tu;
  std::uint32_t begin[5] = {};
};
void order_coded_tus(const TuRecords& tu, TuOrder& out);

// Inline, so that the reconstruction's call reads only the fields it needs of the record.
namespace detail {

// Zeroes the first `rows` rows of an n-wide block over a constant width W <= n (the coded
// columns rounded up), so that the compiler writes a few vector stores instead of calling
// memset for each row.
template <int W>
inline void clear_rows(std::int32_t* c, int n, int rows) {
  for (int j = 0; j < rows; ++j) std::fill_n(c + j * n, W, 0);
}

}  // namespace detail

inline BlockResidual ResidualBlock::compute(const TuView& t, const std::uint32_t* coeffs,
                                            const ResidualParams& p) {
  const int log2 = t.log2, n = 1 << log2, count = t.coeff_count;
  const int bit_depth = tu_bit_depth(p, t);
  const TuKind kind = tu_kind(t);
  if (kind == TuKind::bypass) {
    for (int k = 0; k < count; ++k) coeffs_[coeff_index(coeffs[k])] = coeff_level(coeffs[k]);
  } else {
    const Dequantizer scale(log2, t.qp, bit_depth, tu_scaling(p, t));
    for (int k = 0; k < count; ++k) {
      const int i = coeff_index(coeffs[k]);
      coeffs_[i] = scale(coeff_level(coeffs[k]), i);
    }
  }
  if (kind == TuKind::bypass || kind == TuKind::skip) {
    if (kind == TuKind::skip)
      transform_skip_residual(coeffs_, residual_, log2, bit_depth);
    else
      std::copy_n(coeffs_, n * n, residual_);
    std::fill_n(coeffs_, n * n, 0);
    return {residual_, 0};
  }
  if (t.cols == 1 && t.rows == 1 && kind == TuKind::dct) {  // DC only: a constant residual
    const std::int32_t dc = inverse_dc(coeffs_[0], bit_depth);
    coeffs_[0] = 0;
    return {nullptr, dc};
  }
  inverse_transform(coeffs_, residual_, log2, kind == TuKind::dst, bit_depth, t.cols, t.rows);
  // Back to all zero for the next block: only the region that held coefficients.
  if (t.cols <= 4)
    detail::clear_rows<4>(coeffs_, n, t.rows);
  else if (t.cols <= 8)
    detail::clear_rows<8>(coeffs_, n, t.rows);
  else if (t.cols <= 16)
    detail::clear_rows<16>(coeffs_, n, t.rows);
  else
    detail::clear_rows<32>(coeffs_, n, t.rows);
  return {residual_, 0};
}

}  // namespace sigpu::hevc
