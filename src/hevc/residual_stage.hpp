// The residual stage of reconstruction (docs/design/hevc.md, "The residual stage"): every coded
// transform block's residual, dequantised and inverse transformed, from the picture's records
// alone. The CPU computes it one block at a time (ResidualBlock, which the CPU reconstruction
// adds to each block's prediction); residual_stage_cpu writes every block's into int16 planes,
// as the CUDA kernel does (residual_gpu.hpp), so that the two can be compared sample by sample.
#pragma once

#include <cstdint>
#include <vector>

#include "hevc/parameter_sets.hpp"
#include "hevc/records.hpp"
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

}  // namespace sigpu::hevc
