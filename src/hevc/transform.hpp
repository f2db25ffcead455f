// Scaling (8.6.2, 8.6.3) and the inverse transforms (8.6.4): DST 4x4, DCT 4 to 32, transform
// skip, written as the specification's integer arithmetic with its intermediate clipping.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sigpu::hevc {

/// Scaling of TransCoeffLevel to d[x][y] (8.6.2, 8.6.3) for one transform block, applied to
/// each coefficient as it is parsed (most are zero and never touched). `factors` is ScalingFactor
/// for this size and matrix (row-major [y][x]), or null for the flat m = 16.
class Dequantizer {
 public:
  Dequantizer(int log2, int qp, int bit_depth, const std::uint8_t* factors)
      : factors_(factors),
        scale_(std::int64_t{kLevelScale[qp % 6]} << (qp / 6)),
        shift_(bit_depth + log2 - 5),
        round_(std::int64_t{1} << (shift_ - 1)) {}
  /// The scaled coefficient at index i = y * n + x of a level (already within 16 bits).
  std::int32_t operator()(std::int32_t level, int i) const {
    const std::int64_t m = factors_ ? factors_[i] : 16;
    const std::int64_t v = (level * m * scale_ + round_) >> shift_;
    return static_cast<std::int32_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
  }

 private:
  static constexpr int kLevelScale[6] = {40, 45, 51, 57, 64, 72};
  const std::uint8_t* factors_;
  std::int64_t scale_;
  int shift_;
  std::int64_t round_;
};

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

/// Residual of a transform-skipped block, in place.
void transform_skip_residual(std::int32_t* c, int log2, int bit_depth);

}  // namespace sigpu::hevc
