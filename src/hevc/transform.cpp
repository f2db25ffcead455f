#include "hevc/transform.hpp"

#include <algorithm>
#include <array>

namespace sigpu::hevc {
namespace {

constexpr std::int32_t kCoeffMin = -32768, kCoeffMax = 32767;
constexpr int kLevelScale[6] = {40, 45, 51, 57, 64, 72};

// The 32-point DCT matrix of 8.6.4.2: row k (frequency), column n (sample). Its entries are
// the 31 magnitudes below placed by the symmetry of cos((2n + 1) k pi / 64).
struct DctMatrix {
  std::array<std::array<std::int8_t, 32>, 32> m{};
  DctMatrix() {
    // Magnitude for angle index a = 0..32 in units of pi/64 (a = 0 is row 0's 64).
    constexpr int kMag[33] = {64, 90, 90, 90, 89, 88, 87, 85, 83, 82, 80, 78, 75, 73, 70, 67, 64,
                              61, 57, 54, 50, 46, 43, 38, 36, 31, 25, 22, 18, 13, 9,  4,  0};
    for (int k = 0; k < 32; ++k)
      for (int n = 0; n < 32; ++n) {
        int a = ((2 * n + 1) * k) % 128;
        int sign = 1;
        if (a > 64) a = 128 - a;
        if (a > 32) {
          a = 64 - a;
          sign = -1;
        }
        m[k][n] = static_cast<std::int8_t>(sign * (k == 0 ? 64 : kMag[a]));
      }
  }
};

const DctMatrix& dct() {
  static const DctMatrix d;
  return d;
}

constexpr std::int8_t kDst[4][4] = {
    {29, 55, 74, 84}, {74, 74, 0, -74}, {84, -29, -74, 55}, {55, -84, 74, -29}};

// One inverse 1-D transform of n inputs spaced `stride` apart; out[i] = sum_j M[j][i] * in[j],
// accumulated a matrix row at a time (contiguous, so it vectorises) and skipping the zero
// inputs, which most are. Every input is clipped to 16 bits (8.6.2, 8.6.4.2) and |M| <= 90, so
// |out[i]| <= 32 * 32768 * 90 < 2^31: 32-bit sums are exact, in any order.
void inverse_1d(const std::int32_t* in, int stride, std::int32_t* out, int log2, bool dst) {
  const int n = 1 << log2;
  const int step = 32 >> log2;
  std::fill_n(out, n, 0);
  for (int j = 0; j < n; ++j) {
    const std::int32_t v = in[j * stride];
    if (v == 0) continue;
    const std::int8_t* row = dst ? kDst[j] : dct().m[j * step].data();
    for (int i = 0; i < n; ++i) out[i] += row[i] * v;
  }
}

}  // namespace

void dequantize(std::int32_t* c, int log2, int qp, int bit_depth, const std::uint8_t* factors) {
  const int n = 1 << log2;
  const int bd_shift = bit_depth + log2 - 5;
  const std::int64_t scale = std::int64_t{kLevelScale[qp % 6]} << (qp / 6);
  const std::int64_t round = std::int64_t{1} << (bd_shift - 1);
  for (int i = 0; i < n * n; ++i) {
    if (c[i] == 0) continue;
    const std::int64_t m = factors ? factors[i] : 16;
    const std::int64_t v = (c[i] * m * scale + round) >> bd_shift;
    c[i] = static_cast<std::int32_t>(std::clamp<std::int64_t>(v, kCoeffMin, kCoeffMax));
  }
}

void inverse_transform(std::int32_t* c, int log2, bool dst, int bit_depth) {
  const int n = 1 << log2;
  std::int32_t tmp[32 * 32];
  std::int32_t col[32];
  // Vertical pass: each column x, then clip to 16 bits after a shift of 7.
  for (int x = 0; x < n; ++x) {
    inverse_1d(c + x, n, col, log2, dst);
    for (int y = 0; y < n; ++y)
      tmp[y * n + x] = std::clamp((col[y] + 64) >> 7, kCoeffMin, kCoeffMax);
  }
  const int bd_shift = 20 - bit_depth;
  const std::int32_t round = 1 << (bd_shift - 1);
  for (int y = 0; y < n; ++y) {
    inverse_1d(tmp + y * n, 1, col, log2, dst);
    for (int x = 0; x < n; ++x) c[y * n + x] = (col[x] + round) >> bd_shift;
  }
}

void transform_skip_residual(std::int32_t* c, int log2, int bit_depth) {
  const int n = 1 << log2;
  const int ts_shift = 5 + log2;
  const int bd_shift = 20 - bit_depth;
  const std::int64_t round = std::int64_t{1} << (bd_shift - 1);
  for (int i = 0; i < n * n; ++i)
    c[i] = static_cast<std::int32_t>(((std::int64_t{c[i]} << ts_shift) + round) >> bd_shift);
}

}  // namespace sigpu::hevc
