#include "hevc/transform.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "hevc/simd.hpp"

#if SIGPU_HEVC_MADD
#include <immintrin.h>
#endif

namespace sigpu::hevc {
namespace {

// The matrices per size as int16 rows (tu_residual.hpp), so that a row times a coefficient
// vectorises without widening bytes.
const TransformMatrices& matrices() {
  return kTransformMatrices;
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
    for (int y = 0; y < N; ++y) tmp[x * N + y] = first_pass(col[y]);
  }
  for (int y = 0; y < N; ++y) {
    inverse_1d<N>(m, tmp + y, N, coded, n_coded, col);
    for (int x = 0; x < N; ++x) out[y * N + x] = second_pass(col[x], bit_depth);
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
    for (int x = 0; x < N; ++x) tmp[y * N + x] = first_pass(s[x]);
  }
  for (int y = 0; y < N; ++y) {
    std::int32_t s[N] = {};
    for (int j = 0; j < cols; ++j) {
      const std::int32_t v = tmp[y * N + j];
      for (int i = 0; i < N; ++i) s[i] += std::int32_t{m[j * N + i]} * v;
    }
    for (int i = 0; i < N; ++i) out[y * N + i] = second_pass(s[i], bit_depth);
  }
}

#if SIGPU_HEVC_MADD
// The DCT of 8x8 to 32x32 blocks with AVX2's 16 x 16 -> 32-bit multiply-add of pairs
// (vpmaddwd): each instruction does 16 multiplies and 8 additions, against 8 multiplies for the
// vectorised inverse_2d. The inputs are 16-bit (inverse_1d says why) and the sums are the same
// exact 32-bit integers in another order, so the result is identical. Both passes use the
// partial butterfly of inverse_1d: output i < N/2 is the even inputs' sum E plus the odd ones'
// O, output N-1-i is E - O, and E and O each take pairs of inputs of one parity, (k, k+2).
//
// Vertical pass, 8 columns at a time: rows k and k+2 of the coefficients interleaved into a pair
// per column, times the matrix pair (M[k][y], M[k+2][y]) broadcast; the even rows one level
// further down the butterfly: E[y] = EE[y] + EO[y] and E[N/2-1-y] = EE[y] - EO[y] for y < N/4,
// EE from the rows k = 0 mod 4 and EO from those k = 2 mod 4, paired (k, k+4) (half the
// multiply-adds of E). Rounded, shifted and saturated to 16 bits (the clip of 8.6.4.2), the rows
// go to tmp as int16 with the columns of each group of 4 in the order 0, 2, 1, 3, so that the
// horizontal pass finds its pairs (k, k+2) side by side. Horizontal pass, a row at a time: such a
// pair broadcast times the interleaved matrix rows k and k+2 gives 8 outputs per instruction, over
// the coded columns only.
template <int N>
struct MaddTables {
  static constexpr int P = N / 4;  ///< pairs of one parity
  // As one 32-bit value each (the vertical pass broadcasts them): (M[4p+1][j], M[4p+3][j]) for
  // j < N/2 (O), (M[8q][j], M[8q+4][j]) and (M[8q+2][j], M[8q+6][j]) for j < N/4 (EE and EO).
  // Interleaved as int16 (the horizontal pass loads them): (M[4p][j], M[4p+2][j]) and
  // (M[4p+1][j], M[4p+3][j]) for j < N/2.
  std::int32_t odd[P][N / 2];
  std::int32_t even_even[N / 8][N / 4], even_odd[N / 8][N / 4];
  alignas(32) std::int16_t even_rows[P][N], odd_rows[P][N];
  explicit MaddTables(const std::int16_t* m) {
    auto pair = [m](int k, int d, int j) {
      return static_cast<std::int32_t>(
          static_cast<std::uint16_t>(m[k * N + j]) |
          static_cast<std::uint32_t>(static_cast<std::uint16_t>(m[(k + d) * N + j])) << 16);
    };
    for (int p = 0; p < P; ++p)
      for (int j = 0; j < N / 2; ++j) {
        odd[p][j] = pair(4 * p + 1, 2, j);
        for (int parity = 0; parity < 2; ++parity) {
          std::int16_t* r = (parity ? odd_rows : even_rows)[p];
          r[2 * j] = m[(4 * p + parity) * N + j];
          r[2 * j + 1] = m[(4 * p + parity + 2) * N + j];
        }
      }
    for (int q = 0; q < N / 8; ++q)
      for (int j = 0; j < N / 4; ++j) {
        even_even[q][j] = pair(8 * q, 4, j);
        even_odd[q][j] = pair(8 * q + 2, 4, j);
      }
  }
};

template <int N>
const MaddTables<N>& madd_tables() {
  static const MaddTables<N> t(matrices().dct[N == 8 ? 1 : (N == 16 ? 2 : 3)]);
  return t;
}

// Rows k and k + d of 8 columns as (c[k][x], c[k+d][x]) pairs; a row at or past `rows` is zero.
[[gnu::target("avx2")]] inline __m256i row_pairs(const std::int32_t* c, int n, int k, int d,
                                                 int rows) {
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + k * n));
  if (k + d >= rows) return _mm256_and_si256(a, _mm256_set1_epi32(0xffff));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + (k + d) * n));
  return _mm256_blend_epi16(a, _mm256_slli_epi32(b, 16), 0xaa);
}

// 8 int32 (columns x0..x0+7) to int16 with saturation, stored in the order 0 2 1 3 4 6 5 7.
[[gnu::target("avx2")]] inline void store_row16(std::int16_t* dst, __m256i v) {
  const __m128i packed =
      _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packs_epi32(v, v), 0x08));
  const __m128i order = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
  _mm_store_si128(reinterpret_cast<__m128i*>(dst), _mm_shuffle_epi8(packed, order));
}

template <int N>
[[gnu::target("avx2")]] void inverse_madd(const std::int32_t* c, std::int32_t* out, int cols,
                                          int rows, int bit_depth) {
  using T = MaddTables<N>;
  const T& t = madd_tables<N>();
  alignas(32) std::int16_t tmp[N * N];
  // Pairs with their first row k < rows (k = 8q and 8q + 2 for EE and EO, 4p + 1 for O); the
  // rest would multiply zeros.
  const int ee_pairs = (rows + 7) / 8, eo_pairs = (rows + 5) / 8, odd_pairs = (rows + 2) / 4;
  const __m256i round1 = _mm256_set1_epi32(64);
  for (int x0 = 0; x0 < cols; x0 += 8) {
    __m256i cee[N / 8], ceo[N / 8], co[T::P];
    for (int q = 0; q < ee_pairs; ++q) cee[q] = row_pairs(c + x0, N, 8 * q, 4, rows);
    for (int q = 0; q < eo_pairs; ++q) ceo[q] = row_pairs(c + x0, N, 8 * q + 2, 4, rows);
    for (int p = 0; p < odd_pairs; ++p) co[p] = row_pairs(c + x0, N, 4 * p + 1, 2, rows);
    for (int y = 0; y < N / 4; ++y) {
      __m256i ee = round1, eo = _mm256_setzero_si256();
      __m256i o_lo = _mm256_setzero_si256(), o_hi = _mm256_setzero_si256();
      // Unrolled here and below (the trip counts are small and vary from block to block): 7%
      // fewer instructions for 32x32 blocks.
#pragma GCC unroll 4
      for (int q = 0; q < ee_pairs; ++q)
        ee = _mm256_add_epi32(ee, _mm256_madd_epi16(cee[q], _mm256_set1_epi32(t.even_even[q][y])));
#pragma GCC unroll 4
      for (int q = 0; q < eo_pairs; ++q)
        eo = _mm256_add_epi32(eo, _mm256_madd_epi16(ceo[q], _mm256_set1_epi32(t.even_odd[q][y])));
#pragma GCC unroll 8
      for (int p = 0; p < odd_pairs; ++p) {
        o_lo = _mm256_add_epi32(o_lo, _mm256_madd_epi16(co[p], _mm256_set1_epi32(t.odd[p][y])));
        o_hi = _mm256_add_epi32(
            o_hi, _mm256_madd_epi16(co[p], _mm256_set1_epi32(t.odd[p][N / 2 - 1 - y])));
      }
      const __m256i e_lo = _mm256_add_epi32(ee, eo), e_hi = _mm256_sub_epi32(ee, eo);
      store_row16(tmp + y * N + x0, _mm256_srai_epi32(_mm256_add_epi32(e_lo, o_lo), 7));
      store_row16(tmp + (N - 1 - y) * N + x0, _mm256_srai_epi32(_mm256_sub_epi32(e_lo, o_lo), 7));
      store_row16(tmp + (N / 2 - 1 - y) * N + x0,
                  _mm256_srai_epi32(_mm256_add_epi32(e_hi, o_hi), 7));
      store_row16(tmp + (N / 2 + y) * N + x0, _mm256_srai_epi32(_mm256_sub_epi32(e_hi, o_hi), 7));
    }
  }
  // Pairs of coded columns. A pair's second column may be past `cols` but lies in the same
  // group of 8, which the vertical pass wrote (zero).
  const int col_even = (cols + 3) / 4, col_odd = (cols + 2) / 4;
  const int bd_shift = 20 - bit_depth;
  const __m256i round2 = _mm256_set1_epi32(1 << (bd_shift - 1));
  const __m128i shift = _mm_cvtsi32_si128(bd_shift);
  const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  constexpr int V = N / 16;  // vectors of 8 outputs per half (N = 8: a half vector, below)
  for (int y = 0; y < N; ++y) {
    const std::int16_t* row = tmp + y * N;
    std::int32_t* o_row = out + y * N;
    if constexpr (N == 8) {
      // Four outputs per half: E in the low 128 bits, O in the high.
      __m256i acc = _mm256_set_m128i(_mm_setzero_si128(), _mm_set1_epi32(1 << (bd_shift - 1)));
      for (int p = 0; p < col_even; ++p) {
        std::int32_t pe, po;
        std::memcpy(&pe, row + 4 * p, sizeof pe);
        std::memcpy(&po, row + 4 * p + 2, sizeof po);
        const __m256i b =
            _mm256_set_m128i(_mm_set1_epi32(p < col_odd ? po : 0), _mm_set1_epi32(pe));
        const __m256i m =
            _mm256_set_m128i(_mm_load_si128(reinterpret_cast<const __m128i*>(t.odd_rows[p])),
                             _mm_load_si128(reinterpret_cast<const __m128i*>(t.even_rows[p])));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(b, m));
      }
      const __m128i e = _mm256_castsi256_si128(acc), o = _mm256_extracti128_si256(acc, 1);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o_row),
                       _mm_sra_epi32(_mm_add_epi32(e, o), shift));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o_row + 4),
                       _mm_shuffle_epi32(_mm_sra_epi32(_mm_sub_epi32(e, o), shift), 0x1b));
    } else {
      __m256i e[V], o[V];
      for (int v = 0; v < V; ++v) {
        e[v] = round2;
        o[v] = _mm256_setzero_si256();
      }
#pragma GCC unroll 8
      for (int p = 0; p < col_even; ++p) {
        std::int32_t pair;
        std::memcpy(&pair, row + 4 * p, sizeof pair);
        const __m256i b = _mm256_set1_epi32(pair);
        const __m256i* m = reinterpret_cast<const __m256i*>(t.even_rows[p]);
        for (int v = 0; v < V; ++v)
          e[v] = _mm256_add_epi32(e[v], _mm256_madd_epi16(b, _mm256_load_si256(m + v)));
      }
#pragma GCC unroll 8
      for (int p = 0; p < col_odd; ++p) {
        std::int32_t pair;
        std::memcpy(&pair, row + 4 * p + 2, sizeof pair);
        const __m256i b = _mm256_set1_epi32(pair);
        const __m256i* m = reinterpret_cast<const __m256i*>(t.odd_rows[p]);
        for (int v = 0; v < V; ++v)
          o[v] = _mm256_add_epi32(o[v], _mm256_madd_epi16(b, _mm256_load_si256(m + v)));
      }
      for (int v = 0; v < V; ++v) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o_row + 8 * v),
                            _mm256_sra_epi32(_mm256_add_epi32(e[v], o[v]), shift));
        const __m256i d = _mm256_sra_epi32(_mm256_sub_epi32(e[v], o[v]), shift);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o_row + N - 8 - 8 * v),
                            _mm256_permutevar8x32_epi32(d, reverse));
      }
    }
  }
}

// 4x4 blocks (DCT or DST) the same way, 128 bits wide: the vertical pass pairs rows (0, 1) and
// (2, 3), the horizontal pass columns (0, 1) and (2, 3); no butterfly (the DST has none).
struct Madd4x4Tables {
  std::int32_t pairs[2][4][2];             ///< [dst][y][h]: (M[2h][y], M[2h+1][y])
  alignas(16) std::int16_t rows[2][2][8];  ///< [dst][h]: (M[2h][i], M[2h+1][i]), i = 0..3
  Madd4x4Tables() {
    for (int d = 0; d < 2; ++d) {
      const std::int16_t* m = d ? matrices().dst : matrices().dct[0];
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          const std::int16_t lo = m[2 * h * 4 + i], hi = m[(2 * h + 1) * 4 + i];
          pairs[d][i][h] = static_cast<std::int32_t>(
              static_cast<std::uint16_t>(lo) |
              static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16);
          rows[d][h][2 * i] = lo;
          rows[d][h][2 * i + 1] = hi;
        }
    }
  }
};

[[gnu::target("avx2")]] void inverse_madd_4x4(const std::int32_t* c, std::int32_t* out, bool dst,
                                              int bit_depth) {
  static const Madd4x4Tables t;
  auto row = [c](int j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 4 * j)); };
  const __m128i p01 = _mm_blend_epi16(row(0), _mm_slli_epi32(row(1), 16), 0xaa);
  const __m128i p23 = _mm_blend_epi16(row(2), _mm_slli_epi32(row(3), 16), 0xaa);
  __m128i v[4];
  for (int y = 0; y < 4; ++y) {
    const __m128i s = _mm_add_epi32(_mm_madd_epi16(p01, _mm_set1_epi32(t.pairs[dst][y][0])),
                                    _mm_madd_epi16(p23, _mm_set1_epi32(t.pairs[dst][y][1])));
    v[y] = _mm_srai_epi32(_mm_add_epi32(s, _mm_set1_epi32(64)), 7);
  }
  // Rows 0 and 1, then 2 and 3, saturated to 16 bits: 32-bit element 2r + h is row r's pair h.
  const __m128i t01 = _mm_packs_epi32(v[0], v[1]), t23 = _mm_packs_epi32(v[2], v[3]);
  const __m128i r0 = _mm_load_si128(reinterpret_cast<const __m128i*>(t.rows[dst][0]));
  const __m128i r1 = _mm_load_si128(reinterpret_cast<const __m128i*>(t.rows[dst][1]));
  const int bd_shift = 20 - bit_depth;
  const __m128i round = _mm_set1_epi32(1 << (bd_shift - 1)), shift = _mm_cvtsi32_si128(bd_shift);
  auto finish = [&](__m128i a, __m128i b, std::int32_t* o) {
    const __m128i s = _mm_add_epi32(_mm_madd_epi16(a, r0), _mm_madd_epi16(b, r1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_sra_epi32(_mm_add_epi32(s, round), shift));
  };
  finish(_mm_shuffle_epi32(t01, 0x00), _mm_shuffle_epi32(t01, 0x55), out);
  finish(_mm_shuffle_epi32(t01, 0xaa), _mm_shuffle_epi32(t01, 0xff), out + 4);
  finish(_mm_shuffle_epi32(t23, 0x00), _mm_shuffle_epi32(t23, 0x55), out + 8);
  finish(_mm_shuffle_epi32(t23, 0xaa), _mm_shuffle_epi32(t23, 0xff), out + 12);
}

#endif

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
  return second_pass(64 * first_pass(64 * dc), bit_depth);
}

namespace {

// An empty block, or a DCT block with DC alone (a constant): true when it wrote `out`.
bool trivial_block(const std::int32_t* in, std::int32_t* out, int log2, bool dst, int bit_depth,
                   int cols, int rows) {
  const int n = 1 << log2;
  if (cols == 0) {
    std::fill_n(out, n * n, 0);
    return true;
  }
  if (cols == 1 && rows == 1 && !dst) {
    std::fill_n(out, n * n, inverse_dc(in[0], bit_depth));
    return true;
  }
  return false;
}

}  // namespace

void inverse_transform(const std::int32_t* in, std::int32_t* out, int log2, bool dst, int bit_depth,
                       int cols, int rows) {
  if (trivial_block(in, out, log2, dst, bit_depth, cols, rows)) return;
#if SIGPU_HEVC_MADD
  if (have_avx2()) {
    if (log2 == 2)
      inverse_madd_4x4(in, out, dst, bit_depth);
    else if (log2 == 3)
      inverse_madd<8>(in, out, cols, rows, bit_depth);
    else if (log2 == 4)
      inverse_madd<16>(in, out, cols, rows, bit_depth);
    else
      inverse_madd<32>(in, out, cols, rows, bit_depth);
    return;
  }
#endif
  inverse_transform_portable(in, out, log2, dst, bit_depth, cols, rows);
}

// Built for AVX2 as well as the baseline (chosen when the program loads): the kernels above are
// inlined into each clone, and AVX2's 256-bit multiplies and adds do twice the work per
// instruction of the baseline's SSE2.
SIGPU_HEVC_SIMD_CLONES
void inverse_transform_portable(const std::int32_t* in, std::int32_t* out, int log2, bool dst,
                                int bit_depth, int cols, int rows) {
  if (trivial_block(in, out, log2, dst, bit_depth, cols, rows)) return;
  const TransformMatrices& m = matrices();
  switch (log2) {
    case 2:
      inverse_4x4(in, out, dst ? m.dst : m.dct[0], cols, rows, bit_depth);
      break;
    case 3:
      inverse_2d<8>(in, out, m.dct[1], cols, rows, bit_depth);
      break;
    case 4:
      inverse_2d<16>(in, out, m.dct[2], cols, rows, bit_depth);
      break;
    default:
      inverse_2d<32>(in, out, m.dct[3], cols, rows, bit_depth);
      break;
  }
}

void transform_skip_residual(const std::int32_t* in, std::int32_t* out, int log2, int bit_depth) {
  const int n = 1 << log2;
  for (int i = 0; i < n * n; ++i) out[i] = transform_skip_sample(in[i], log2, bit_depth);
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
