// Intra sample prediction (8.4.4.2): reference filtering and the planar, DC and 33 angular
// modes. The caller gathers the reference samples (with availability and substitution, 8.4.4.2.2)
// into one array ordered as the substitution process scans them:
//   ref[0 .. 2n-1]   p[-1][2n-1] .. p[-1][0]   (left column, bottom up)
//   ref[2n]          p[-1][-1]
//   ref[2n+1 .. 4n]  p[0][-1] .. p[2n-1][-1]   (top row, left to right)
#pragma once

#include <cstddef>
#include <cstdint>

namespace sigpu::hevc {

struct IntraParams {
  int log2 = 2;                   ///< log2 of the block size n
  int mode = 0;                   ///< 0 planar, 1 DC, 2..34 angular
  bool luma = true;               ///< cIdx == 0 (edge filters, reference filtering)
  bool filter_refs = true;        ///< !intra_smoothing_disabled_flag
  bool strong_smoothing = false;  ///< strong_intra_smoothing_enabled_flag
  int bit_depth = 8;
  /// The hand-written AVX2 kernels where the CPU has them; off, their portable twin (tests).
  bool use_simd = true;
};

/// The 4n + 1 reference samples of the n x n block (n = 1 << log2) at (x, y) of `plane` (stride in
/// samples) into ref, as above: those available read from the plane, the others substituted
/// (8.4.4.2.2). `avail` and `corner`: TuRecords::avail and kTuCorner, in units of `unit`
/// samples (avail_unit).
void gather_intra_refs(const std::uint16_t* plane, std::ptrdiff_t stride, int x, int y, int log2,
                       int unit, std::uint32_t avail, bool corner, int bit_depth,
                       std::int32_t* ref);

/// Predicts the n x n block into dst (stride in samples); ref holds 4n + 1 samples as above and
/// may be modified (filtered) in place.
void intra_predict(std::int32_t* ref, const IntraParams& p, std::uint16_t* dst,
                   std::ptrdiff_t stride);

}  // namespace sigpu::hevc
