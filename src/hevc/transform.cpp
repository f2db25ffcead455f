#include "hevc/transform.hpp"

#include <algorithm>
#include <array>

#include "hevc/simd.hpp"

namespace sigpu::hevc {
namespace {

constexpr std::int32_t kCoeffMin = -32768, kCoeffMax = 32767;

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

// The matrices per size as int16 rows (row j = frequency j, N columns), so that a row times a
// coefficient vectorises without widening bytes.
struct Matrices {
  std::int16_t m[4][32 * 32] = {};  ///< by log2 - 2
  std::int16_t dst[4 * 4] = {};
  Matrices() {
    for (int l = 0; l < 4; ++l) {
      const int n = 4 << l, step = 32 / n;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) m[l][j * n + i] = dct().m[j * step][i];
    }
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) dst[j * 4 + i] = kDst[j][i];
  }
};

const Matrices& matrices() {
  static const Matrices m;
  return m;
}

// One inverse 1-D transform: out[i] = sum_k M[j][i] * in[j * stride] over the inputs j =
// list[k], k < count (the others are zero), accumulated a matrix row at a time (contiguous, so
// it vectorises) and skipping zero inputs, which many still are. Every input is clipped to 16
// bits (8.6.2, 8.6.4.2) and |M| <= 90, so |out[i]| <= 32 * 32768 * 90 < 2^31: 32-bit sums are
// exact, in any order. The DCT's rows are even or odd about the middle (M[j][N-1-i] = (-1)^j
// M[j][i]), so it sums the even and the odd rows over the first half only and forms both halves
// from them (the partial butterfly). Returns false when every input was zero (out is then
// zero).
template <int N>
[[gnu::always_inline]] inline bool inverse_1d(const std::int16_t* m, const std::int32_t* in,
                                              int stride, const std::uint8_t* list, int count,
                                              std::int32_t* out) {
  constexpr int H = N / 2;
  std::int32_t acc[2][H] = {};
  bool any = false;
  for (int k = 0; k < count; ++k) {
    const int j = list[k];
    // 16 bits (the inputs are clipped), so that the products are 16 x 16 -> 32-bit widening
    // multiplies, which SSE2 has, not 32-bit ones, which it lacks.
    const std::int16_t v = static_cast<std::int16_t>(in[j * stride]);
    if (v == 0) continue;
    any = true;
    const std::int16_t* row = m + j * N;
    std::int32_t* a = acc[j & 1];
    for (int i = 0; i < H; ++i) a[i] += std::int32_t{row[i]} * v;
  }
  for (int i = 0; i < H; ++i) {
    out[i] = acc[0][i] + acc[1][i];
    out[N - 1 - i] = acc[0][i] - acc[1][i];
  }
  return any;
}

constexpr struct Identity {
  std::uint8_t j[32];
  constexpr Identity() : j() {
    for (int i = 0; i < 32; ++i) j[i] = static_cast<std::uint8_t>(i);
  }
} kIdentity;

// Both passes over a block whose non-zero coefficients lie in its first `cols` columns and
// `rows` rows: the vertical pass runs only on those columns and reads only those rows, and the
// horizontal pass reads only the columns that held a non-zero coefficient (the rest are zero).
template <int N>
[[gnu::always_inline]] inline void inverse_2d(const std::int32_t* c, std::int32_t* out,
                                              const std::int16_t* m, int cols, int rows,
                                              int bit_depth) {
  // The vertical pass's output transposed (column x at tmp[x * N]), so that it is stored a
  // vector at a time; only the columns listed in `coded` are written.
  std::int32_t tmp[N * N];
  std::int32_t col[N];
  std::uint8_t coded[N];
  int n_coded = 0;
  for (int x = 0; x < cols; ++x) {
    if (!inverse_1d<N>(m, c + x, N, kIdentity.j, rows, col)) continue;
    coded[n_coded++] = static_cast<std::uint8_t>(x);
    for (int y = 0; y < N; ++y)
      tmp[x * N + y] = std::clamp((col[y] + 64) >> 7, kCoeffMin, kCoeffMax);
  }
  const int bd_shift = 20 - bit_depth;
  const std::int32_t round = 1 << (bd_shift - 1);
  for (int y = 0; y < N; ++y) {
    inverse_1d<N>(m, tmp + y, N, coded, n_coded, col);
    for (int x = 0; x < N; ++x) out[y * N + x] = (col[x] + round) >> bd_shift;
  }
}

// Both passes over a 4x4 block (the DCT's or the DST's matrix m) as whole rows: each pass
// multiplies a row of four inputs (or outputs) by one matrix entry at a time, four lanes wide,
// with no per-coefficient tests: at this size the per-coefficient bookkeeping of inverse_2d
// costs more than the multiplies it skips (at 8x8 and above it no longer does). The inputs are
// 16-bit (see inverse_1d), so the sums are exact.
[[gnu::always_inline]] inline void inverse_4x4(const std::int32_t* c, std::int32_t* out,
                                               const std::int16_t* m, int cols, int rows,
                                               int bit_depth) {
  constexpr int N = 4;
  std::int32_t tmp[N * N];  // after the vertical pass, row-major
  for (int y = 0; y < N; ++y) {
    std::int32_t s[N] = {};
    for (int j = 0; j < rows; ++j) {
      const std::int32_t w = m[j * N + y];
      for (int x = 0; x < N; ++x) s[x] += w * c[j * N + x];
    }
    for (int x = 0; x < N; ++x) tmp[y * N + x] = std::clamp((s[x] + 64) >> 7, kCoeffMin, kCoeffMax);
  }
  const int bd_shift = 20 - bit_depth;
  const std::int32_t round = 1 << (bd_shift - 1);
  for (int y = 0; y < N; ++y) {
    std::int32_t s[N] = {};
    for (int j = 0; j < cols; ++j) {
      const std::int32_t v = tmp[y * N + j];
      for (int i = 0; i < N; ++i) s[i] += std::int32_t{m[j * N + i]} * v;
    }
    for (int i = 0; i < N; ++i) out[y * N + i] = (s[i] + round) >> bd_shift;
  }
}

}  // namespace

void inverse_transform(std::int32_t* c, int log2, bool dst, int bit_depth) {
  const int n = 1 << log2;
  int cols = 0, rows = 0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      if (c[y * n + x]) {
        cols = std::max(cols, x + 1);
        rows = std::max(rows, y + 1);
      }
  inverse_transform(c, c, log2, dst, bit_depth, cols, rows);
}

std::int32_t inverse_dc(std::int32_t dc, int bit_depth) {
  // Both passes give one value, M[0][i] = 64 everywhere.
  const int bd_shift = 20 - bit_depth;
  const std::int32_t t = std::clamp((64 * dc + 64) >> 7, kCoeffMin, kCoeffMax);
  return (64 * t + (1 << (bd_shift - 1))) >> bd_shift;
}

// Built for AVX2 as well as the baseline (chosen when the program loads): the kernels above are
// inlined into each clone, and AVX2's 256-bit multiplies and adds do twice the work per
// instruction of the baseline's SSE2.
SIGPU_HEVC_SIMD_CLONES
void inverse_transform(const std::int32_t* in, std::int32_t* out, int log2, bool dst, int bit_depth,
                       int cols, int rows) {
  const int n = 1 << log2;
  if (cols == 0) {
    std::fill_n(out, n * n, 0);
    return;
  }
  if (cols == 1 && rows == 1 && !dst) {
    std::fill_n(out, n * n, inverse_dc(in[0], bit_depth));
    return;
  }
  const Matrices& m = matrices();
  switch (log2) {
    case 2:
      inverse_4x4(in, out, dst ? m.dst : m.m[0], cols, rows, bit_depth);
      break;
    case 3:
      inverse_2d<8>(in, out, m.m[1], cols, rows, bit_depth);
      break;
    case 4:
      inverse_2d<16>(in, out, m.m[2], cols, rows, bit_depth);
      break;
    default:
      inverse_2d<32>(in, out, m.m[3], cols, rows, bit_depth);
      break;
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

namespace {

// With the width a constant, even 4-sample rows are one vector each (no scalar remainder loop).
template <int N>
[[gnu::always_inline]] inline void add_residual_n(std::uint16_t* dst, std::ptrdiff_t stride,
                                                  const std::int32_t* r, int max_val) {
  for (int j = 0; j < N; ++j) {
    std::uint16_t* row = dst + j * stride;
    for (int i = 0; i < N; ++i)
      row[i] = static_cast<std::uint16_t>(std::clamp(row[i] + r[j * N + i], 0, max_val));
  }
}

}  // namespace

SIGPU_HEVC_SIMD_CLONES
void add_residual(std::uint16_t* dst, std::ptrdiff_t stride, const std::int32_t* r, int log2,
                  int max_val) {
  switch (log2) {
    case 2:
      add_residual_n<4>(dst, stride, r, max_val);
      break;
    case 3:
      add_residual_n<8>(dst, stride, r, max_val);
      break;
    case 4:
      add_residual_n<16>(dst, stride, r, max_val);
      break;
    default:
      add_residual_n<32>(dst, stride, r, max_val);
      break;
  }
}

SIGPU_HEVC_SIMD_CLONES
void add_constant(std::uint16_t* dst, std::ptrdiff_t stride, std::int32_t r, int log2,
                  int max_val) {
  const int n = 1 << log2;
  for (int j = 0; j < n; ++j) {
    std::uint16_t* row = dst + j * stride;
    for (int i = 0; i < n; ++i)
      row[i] = static_cast<std::uint16_t>(std::clamp(row[i] + r, 0, max_val));
  }
}

}  // namespace sigpu::hevc
