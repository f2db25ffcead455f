// One transform block's residual from its record, written once for host and device: the
// record's fields, dequantisation (8.6.2, 8.6.3), the transform matrices (8.6.4.2) and the
// arithmetic of each inverse transform pass, transform skip and transquant bypass. The CPU's
// residual stage (residual_stage.hpp) and the CUDA kernel (cuda/residual_kernel.cuh) tile the
// work their own ways and take every per-coefficient and per-sample formula from here.
// Extended precision processing is off (the decoder refuses it): coefficients are 16-bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "hevc/records.hpp"

namespace sigpu::hevc {

// ---- scaling factors -------------------------------------------------------------------------

/// ScalingFactor (7.4.5) of every size and matrix in one flat table, so that one copy moves it
/// to the device: sizeId 0..3 (4x4 .. 32x32) one after the other, in each the six matrices
/// (matrixId 0..5: intra Y, Cb, Cr, inter Y, Cb, Cr), each row-major [y][x] at its full size.
constexpr int kScalingFactorBytes = 6 * (16 + 64 + 256 + 1024);

/// Offset in that table of the matrix for a block of 1 << log2 samples a side.
SIGPU_HD constexpr int scaling_offset(int log2, int matrix) {
  // The sizes before log2: 6 * (16 + 64 + ...), i.e. 6 * 16 * (4^(log2-2) - 1) / 3.
  return 2 * 16 * ((1 << 2 * (log2 - 2)) - 1) + matrix * (1 << 2 * log2);
}
static_assert(scaling_offset(6, 0) == kScalingFactorBytes);

// ---- the picture-wide parameters -------------------------------------------------------------

/// What the residual of every block of a picture depends on beyond its record.
struct ResidualParams {
  int bit_depth[2] = {8, 8};  ///< BitDepthY, BitDepthC
  /// The picture's scaling factors (kScalingFactorBytes, scaling_offset), in the memory of the
  /// side that computes; null when scaling_list_enabled_flag is 0 (m = 16 everywhere).
  const std::uint8_t* scaling = nullptr;
};

// ---- one block's record ----------------------------------------------------------------------

/// One TuRecords entry's fields.
struct TuView {
  int x, y, log2, comp, mode, qp, flags, cols, rows;
  std::uint32_t coeff_begin;
  int coeff_count;
};

/// TuRecords' arrays as pointers (host or device memory), to read one entry from.
struct TuArrays {
  const std::uint16_t *x, *y;
  const std::uint8_t *log2, *comp, *mode, *qp, *flags, *cols, *rows;
  const std::uint32_t* coeff_begin;
  const std::uint16_t* coeff_count;

  SIGPU_HD TuView operator[](std::size_t t) const {
    return {x[t],     y[t],    log2[t], comp[t],        mode[t],       qp[t],
            flags[t], cols[t], rows[t], coeff_begin[t], coeff_count[t]};
  }
};

/// The arrays of `tu` (host memory).
inline TuArrays tu_arrays(const TuRecords& tu) {
  return {tu.x.data(),    tu.y.data(),           tu.log2.data(),       tu.comp.data(),
          tu.mode.data(), tu.qp.data(),          tu.flags.data(),      tu.cols.data(),
          tu.rows.data(), tu.coeff_begin.data(), tu.coeff_count.data()};
}

/// How a coded block's residual follows from its coefficients.
enum class TuKind : std::uint8_t {
  dct,     ///< dequantised, inverse DCT
  dst,     ///< dequantised, inverse DST (intra luma 4x4, 8.6.4.2)
  skip,    ///< dequantised, transform skip
  bypass,  ///< cu_transquant_bypass: the levels are the residual
};

SIGPU_HD inline TuKind tu_kind(const TuView& t) {
  if (t.flags & kTuBypass) return TuKind::bypass;
  if (t.flags & kTuSkip) return TuKind::skip;
  return (t.flags & kTuIntra) && t.comp == 0 && t.log2 == 2 ? TuKind::dst : TuKind::dct;
}

SIGPU_HD inline int tu_bit_depth(const ResidualParams& p, const TuView& t) {
  return t.comp ? p.bit_depth[1] : p.bit_depth[0];
}

/// ScalingFactor of the block (row-major [y][x]), or null for the flat m = 16: scaling lists
/// off, or a transform-skipped block larger than 4x4 (8.6.4.2).
SIGPU_HD inline const std::uint8_t* tu_scaling(const ResidualParams& p, const TuView& t) {
  if (!p.scaling || ((t.flags & kTuSkip) && t.log2 > 2)) return nullptr;
  return p.scaling + scaling_offset(t.log2, (t.flags & kTuIntra ? 0 : 3) + t.comp);
}

// ---- dequantisation --------------------------------------------------------------------------

/// Scaling of TransCoeffLevel to d[x][y] (8.6.2, 8.6.3) for one transform block. `factors` is
/// ScalingFactor for this size and matrix (row-major [y][x]), or null for the flat m = 16.
class Dequantizer {
 public:
  SIGPU_HD Dequantizer(int log2, int qp, int bit_depth, const std::uint8_t* factors)
      : factors_(factors),
        scale_(std::int64_t{level_scale(qp % 6)} << (qp / 6)),
        shift_(bit_depth + log2 - 5),
        round_(std::int64_t{1} << (shift_ - 1)) {}
  /// The scaled coefficient at index i = y * n + x of a level (already within 16 bits).
  SIGPU_HD std::int32_t operator()(std::int32_t level, int i) const {
    const std::int64_t m = factors_ ? factors_[i] : 16;
    const std::int64_t v = (level * m * scale_ + round_) >> shift_;
    return static_cast<std::int32_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
  }

 private:
  SIGPU_HD static int level_scale(int k) {  // levelScale[] = {40, 45, 51, 57, 64, 72}
    return k < 3 ? (k == 0 ? 40 : (k == 1 ? 45 : 51)) : (k == 3 ? 57 : (k == 4 ? 64 : 72));
  }
  const std::uint8_t* factors_;
  std::int64_t scale_;
  int shift_;
  std::int64_t round_;
};

// ---- the inverse transforms ------------------------------------------------------------------

/// The transform matrices of 8.6.4.2 as int16, row j = frequency j, column i = sample i: the
/// DCT of each size (by log2 - 2; the 32-point matrix's rows 0, 32/N, 2*32/N, ...) and the DST.
/// The 32-point matrix's entries are the magnitudes below placed by the symmetry of
/// cos((2i + 1) j pi / 64).
struct TransformMatrices {
  std::int16_t dct[4][32 * 32] = {};
  std::int16_t dst[4 * 4] = {};

  constexpr TransformMatrices() {
    // Magnitude for angle index a = 0..32 in units of pi/64 (a = 0 is row 0's 64).
    constexpr int kMag[33] = {64, 90, 90, 90, 89, 88, 87, 85, 83, 82, 80, 78, 75, 73, 70, 67, 64,
                              61, 57, 54, 50, 46, 43, 38, 36, 31, 25, 22, 18, 13, 9,  4,  0};
    constexpr int kDst[16] = {29, 55, 74, 84, 74, 74, 0, -74, 84, -29, -74, 55, 55, -84, 74, -29};
    for (int l = 0; l < 4; ++l) {
      const int n = 4 << l, step = 32 / n;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const int k = j * step;
          int a = ((2 * i + 1) * k) % 128, sign = 1;
          if (a > 64) a = 128 - a;
          if (a > 32) {
            a = 64 - a;
            sign = -1;
          }
          dct[l][j * n + i] = static_cast<std::int16_t>(sign * (k == 0 ? 64 : kMag[a]));
        }
    }
    for (int i = 0; i < 16; ++i) dst[i] = static_cast<std::int16_t>(kDst[i]);
  }
};

inline constexpr TransformMatrices kTransformMatrices{};

/// The first (vertical) pass's output from its sum over the inputs: rounded, shifted by 7 and
/// clipped to 16 bits (8.6.4.2). Every input is 16-bit and |M| <= 90, so a sum of up to 32
/// products fits 32 bits exactly, in any order.
SIGPU_HD inline std::int32_t first_pass(std::int32_t sum) {
  const std::int32_t v = (sum + 64) >> 7;
  return v < -32768 ? -32768 : (v > 32767 ? 32767 : v);
}

/// The residual from the second (horizontal) pass's sum: bdShift = 20 - BitDepth (8.6.2).
SIGPU_HD inline std::int32_t second_pass(std::int32_t sum, int bit_depth) {
  const int shift = 20 - bit_depth;
  return (sum + (1 << (shift - 1))) >> shift;
}

/// The residual of a transform-skipped block's scaled coefficient d (8.6.4.2: tsShift = 5 +
/// log2, then bdShift).
SIGPU_HD inline std::int32_t transform_skip_sample(std::int32_t d, int log2, int bit_depth) {
  const int shift = 20 - bit_depth;
  const std::int64_t round = std::int64_t{1} << (shift - 1);
  return static_cast<std::int32_t>(((std::int64_t{d} << (5 + log2)) + round) >> shift);
}

/// The residual as the stage stores it, int16: saturating changes no reconstructed sample,
/// since a prediction of at most 12 bits plus a residual beyond 16 bits clips to the same
/// extreme (0 or the maximum) as plus the saturated one.
SIGPU_HD inline std::int16_t saturate16(std::int32_t r) {
  return static_cast<std::int16_t>(r < -32768 ? -32768 : (r > 32767 ? 32767 : r));
}

/// The residual planes a stage writes: int16 samples, each plane the size of the picture's.
struct ResidualPlanes {
  std::int16_t* data[3] = {};
  std::ptrdiff_t stride[3] = {};  ///< in samples
};

}  // namespace sigpu::hevc
