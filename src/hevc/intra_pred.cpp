#include "hevc/intra_pred.hpp"

#include <algorithm>
#include <cstdlib>

#include <cstring>

#include "hevc/simd.hpp"

#if SIGPU_HEVC_MADD
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sigpu::hevc {
namespace {

constexpr int kAngle[35] = {0,  0,  32,  26,  21,  17,  13,  9,   5,   2,   0,   -2,
                            -5, -9, -13, -17, -21, -26, -32, -26, -21, -17, -13, -9,
                            -5, -2, 0,   2,   5,   9,   13,  17,  21,  26,  32};
constexpr int kInvAngle[35] = {0,    0,    0,     0,     0,    0,    0,     0,     0,
                               0,    0,    -4096, -1638, -910, -630, -482,  -390,  -315,
                               -256, -315, -390,  -482,  -630, -910, -1638, -4096, 0,
                               0,    0,    0,     0,     0,    0,    0,     0};

// dst[y * stride + x] = block[x * n + y]: the horizontal modes' rows put back as columns. With
// SSE2 (every x86-64) 4x4 and 8x8 tiles go through registers instead of a sample at a time.
[[gnu::always_inline]] inline void transpose_to(std::uint16_t* dst, std::ptrdiff_t stride,
                                                const std::uint16_t* block, int n) {
#if defined(__SSE2__)
  if (n == 4) {
    const __m128i t0 =
        _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block)),
                           _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 4)));
    const __m128i t1 =
        _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 8)),
                           _mm_loadl_epi64(reinterpret_cast<const __m128i*>(block + 12)));
    const __m128i c01 = _mm_unpacklo_epi32(t0, t1), c23 = _mm_unpackhi_epi32(t0, t1);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), c01);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + stride), _mm_unpackhi_epi64(c01, c01));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 2 * stride), c23);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 3 * stride), _mm_unpackhi_epi64(c23, c23));
    return;
  }
  for (int bx = 0; bx < n; bx += 8)
    for (int by = 0; by < n; by += 8) {
      __m128i a[8], t[8], u[8];
      for (int r = 0; r < 8; ++r)
        a[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + (bx + r) * n + by));
      for (int r = 0; r < 8; r += 2) {
        t[r] = _mm_unpacklo_epi16(a[r], a[r + 1]);
        t[r + 1] = _mm_unpackhi_epi16(a[r], a[r + 1]);
      }
      for (int h = 0; h < 8; h += 4) {  // rows 0-3, then 4-7
        u[h] = _mm_unpacklo_epi32(t[h], t[h + 2]);
        u[h + 1] = _mm_unpackhi_epi32(t[h], t[h + 2]);
        u[h + 2] = _mm_unpacklo_epi32(t[h + 1], t[h + 3]);
        u[h + 3] = _mm_unpackhi_epi32(t[h + 1], t[h + 3]);
      }
      std::uint16_t* o = dst + by * stride + bx;
      for (int k = 0; k < 4; ++k) {  // u[k] holds columns 2k and 2k + 1 of rows 0-3
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 2 * k * stride),
                         _mm_unpacklo_epi64(u[k], u[k + 4]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + (2 * k + 1) * stride),
                         _mm_unpackhi_epi64(u[k], u[k + 4]));
      }
    }
#else
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) dst[y * stride + x] = block[x * n + y];
#endif
}

#if SIGPU_HEVC_MADD
// The angular modes' rows (8.4.4.2.6) with AVX2: ((32 - f) * r[i] + f * r[i + 1] + 16) >> 5 is
// one multiply-add of the pair (r[i], r[i + 1]) with (32 - f, f), 8 samples per 128 bits; the
// portable loop in predict() is its twin. `r` is refArr shifted as there; row j goes to
// out + j * out_stride.
template <int n>
[[gnu::target("avx2")]] void angular_rows_avx2(const std::int16_t* r, int angle, std::uint16_t* out,
                                               std::ptrdiff_t out_stride) {
  const __m256i round = _mm256_set1_epi32(16);
  for (int j = 0; j < n; ++j) {
    const int pos = (j + 1) * angle;
    const int idx = pos >> 5, fact = pos & 31;
    const std::int16_t* src = r + idx + 1;
    std::uint16_t* row = out + j * out_stride;
    if (!fact) {
      std::memcpy(row, src, n * sizeof(std::uint16_t));  // samples are not negative
      continue;
    }
    const std::uint32_t w = static_cast<std::uint32_t>(32 - fact) | static_cast<std::uint32_t>(fact)
                                                                        << 16;
    if constexpr (n == 4) {
      const __m128i a = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src));
      const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 1));
      const __m128i v =
          _mm_madd_epi16(_mm_unpacklo_epi16(a, b), _mm_set1_epi32(static_cast<int>(w)));
      const __m128i s = _mm_srai_epi32(_mm_add_epi32(v, _mm256_castsi256_si128(round)), 5);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(row), _mm_packus_epi32(s, s));
    } else if constexpr (n == 8) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 1));
      const __m128i wv = _mm_set1_epi32(static_cast<int>(w)), r16 = _mm256_castsi256_si128(round);
      const __m128i lo =
          _mm_srai_epi32(_mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(a, b), wv), r16), 5);
      const __m128i hi =
          _mm_srai_epi32(_mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(a, b), wv), r16), 5);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row), _mm_packus_epi32(lo, hi));
    } else {
      const __m256i wv = _mm256_set1_epi32(static_cast<int>(w));
      for (int i = 0; i < n; i += 16) {
        // Unpacking and packing both work within 128-bit lanes, so the order comes out right.
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 1));
        const __m256i lo = _mm256_srai_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wv), round), 5);
        const __m256i hi = _mm256_srai_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wv), round), 5);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + i), _mm256_packus_epi32(lo, hi));
      }
    }
  }
}

// Planar prediction (8.4.4.2.5) with AVX2: a sample is ((n-1-x) p[-1][y] + (x+1) p[n][-1] +
// (n-1-y) p[x][-1] + (y+1) p[-1][n] + n) >> (log2 n + 1), two multiply-adds of pairs: the
// weights (n-1-x, x+1) by (p[-1][y], p[n][-1]) broadcast, and (p[x][-1], p[-1][n]) by the
// weights (n-1-y, y+1) broadcast; 8 samples per 256 bits (4 for n = 4). Twin: predict().
template <int n>
[[gnu::target("avx2")]] void planar_avx2(const std::int32_t* ref, std::uint16_t* dst,
                                         std::ptrdiff_t stride) {
  constexpr int log2 = n == 4 ? 2 : (n == 8 ? 3 : (n == 16 ? 4 : 5));
  constexpr int V = n < 8 ? 1 : n / 8;  // vectors per row
  alignas(32) std::int16_t weights[2 * (n < 8 ? 8 : n)] = {}, tops[2 * (n < 8 ? 8 : n)] = {};
  const std::int16_t bottom_left = static_cast<std::int16_t>(ref[2 * n - 1 - n]);
  for (int x = 0; x < n; ++x) {
    weights[2 * x] = static_cast<std::int16_t>(n - 1 - x);
    weights[2 * x + 1] = static_cast<std::int16_t>(x + 1);
    tops[2 * x] = static_cast<std::int16_t>(ref[2 * n + 1 + x]);
    tops[2 * x + 1] = bottom_left;
  }
  auto pair = [](int lo, int hi) {
    return static_cast<int>(static_cast<std::uint32_t>(lo & 0xffff) | static_cast<std::uint32_t>(hi)
                                                                          << 16);
  };
  const int top_right = ref[2 * n + 1 + n];
  const __m256i round = _mm256_set1_epi32(n);
  __m256i w[V], t[V];
  for (int v = 0; v < V; ++v) {
    w[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(weights) + v);
    t[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tops) + v);
  }
  for (int y = 0; y < n; ++y) {
    const __m256i sides = _mm256_set1_epi32(pair(ref[2 * n - 1 - y], top_right));
    const __m256i vert = _mm256_set1_epi32(pair(n - 1 - y, y + 1));
    __m256i s[V];
    for (int v = 0; v < V; ++v)
      s[v] = _mm256_srai_epi32(_mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(w[v], sides),
                                                                 _mm256_madd_epi16(t[v], vert)),
                                                round),
                               log2 + 1);
    std::uint16_t* row = dst + y * stride;
    if constexpr (n == 4) {
      const __m128i lo = _mm256_castsi256_si128(s[0]);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(row), _mm_packus_epi32(lo, lo));
    } else if constexpr (n == 8) {
      const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(s[0], s[0]), 0x08);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(row), _mm256_castsi256_si128(packed));
    } else {
      for (int v = 0; v < V; v += 2)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + 8 * v),
                            _mm256_permute4x64_epi64(_mm256_packus_epi32(s[v], s[v + 1]), 0xd8));
    }
  }
}
#endif

// 8.4.4.2.3: [1 2 1] smoothing or, for 32x32 luma with flat edges, bilinear interpolation.
[[gnu::always_inline]] inline void filter_refs(std::int32_t* ref, const IntraParams& p) {
  const int n = 1 << p.log2;
  if (p.mode == 1 || n == 4) return;
  const int dist = std::min(std::abs(p.mode - 26), std::abs(p.mode - 10));
  const int thres = n == 8 ? 7 : (n == 16 ? 1 : 0);
  if (dist <= thres) return;
  const int len = 4 * n + 1;
  const int corner = ref[2 * n], bottom = ref[0], right = ref[4 * n];
  if (p.strong_smoothing && p.luma && n == 32 &&
      std::abs(corner + right - 2 * ref[2 * n + n]) < (1 << (p.bit_depth - 5)) &&
      std::abs(corner + bottom - 2 * ref[2 * n - n]) < (1 << (p.bit_depth - 5))) {
    // ref[2n - 1 - y] = p[-1][y], ref[2n + 1 + x] = p[x][-1]
    for (int i = 0; i < 63; ++i) {
      ref[2 * n - 1 - i] = ((63 - i) * corner + (i + 1) * bottom + 32) >> 6;
      ref[2 * n + 1 + i] = ((63 - i) * corner + (i + 1) * right + 32) >> 6;
    }
    return;
  }
  std::int32_t tmp[4 * 64 + 1];
  tmp[0] = ref[0];
  tmp[len - 1] = ref[len - 1];
  for (int i = 1; i < len - 1; ++i) tmp[i] = (ref[i - 1] + 2 * ref[i] + ref[i + 1] + 2) >> 2;
  std::copy(tmp, tmp + len, ref);
}

// The prediction of an n x n block, n = 1 << p.log2 a constant, so that the row loops are
// whole vectors (4-sample rows included) with no remainder loops.
template <int n>
[[gnu::always_inline]] inline void predict(std::int32_t* ref, const IntraParams& p,
                                           std::uint16_t* dst, std::ptrdiff_t stride) {
  if (p.luma && p.filter_refs) filter_refs(ref, p);
  // Accessors in the specification's coordinates.
  auto left = [&](int y) { return ref[2 * n - 1 - y]; };  // p[-1][y], y = -1..2n-1
  auto top = [&](int x) { return ref[2 * n + 1 + x]; };   // p[x][-1], x = -1..2n-1
  const int max_val = (1 << p.bit_depth) - 1;
  auto clip = [&](int v) { return static_cast<std::uint16_t>(std::clamp(v, 0, max_val)); };

  if (p.mode == 0) {
#if SIGPU_HEVC_MADD
    if (p.use_simd && have_avx2()) {
      planar_avx2<n>(ref, dst, stride);
      return;
    }
#endif
    // Samples (at most 12 bits) and weights (at most 32) as int16, so that the products are
    // 16 x 16 -> 32-bit widening multiplies, which SSE2 vectorises.
    std::int16_t w_left[32], w_right[32], t[32];
    for (int x = 0; x < n; ++x) {
      w_left[x] = static_cast<std::int16_t>(n - 1 - x);
      w_right[x] = static_cast<std::int16_t>(x + 1);
      t[x] = static_cast<std::int16_t>(top(x));
    }
    const std::int16_t top_right = static_cast<std::int16_t>(top(n));
    const std::int32_t bottom_left = left(n);
    for (int y = 0; y < n; ++y) {
      const std::int16_t l = static_cast<std::int16_t>(left(y));
      const std::int16_t wt = static_cast<std::int16_t>(n - 1 - y);
      const std::int32_t row_const = (y + 1) * bottom_left + n;
      std::uint16_t* row = dst + y * stride;
      for (int x = 0; x < n; ++x)
        row[x] = static_cast<std::uint16_t>((std::int32_t{w_left[x]} * l +
                                             std::int32_t{w_right[x]} * top_right +
                                             std::int32_t{wt} * t[x] + row_const) >>
                                            (p.log2 + 1));
    }
    return;
  }
  if (p.mode == 1) {
    int sum = n;
    for (int i = 0; i < n; ++i) sum += left(i) + top(i);
    const int dc = sum >> (p.log2 + 1);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) dst[y * stride + x] = static_cast<std::uint16_t>(dc);
    if (p.luma && n < 32) {
      dst[0] = static_cast<std::uint16_t>((left(0) + 2 * dc + top(0) + 2) >> 2);
      for (int x = 1; x < n; ++x) dst[x] = static_cast<std::uint16_t>((top(x) + 3 * dc + 2) >> 2);
      for (int y = 1; y < n; ++y)
        dst[y * stride] = static_cast<std::uint16_t>((left(y) + 3 * dc + 2) >> 2);
    }
    return;
  }
  const int angle = kAngle[p.mode];
  const bool vertical = p.mode >= 18;
  // refArr[k + n], k = -n..2n: the main reference extended by the projected side one.
  // int16 (samples have at most 12 bits) for the 16-bit multiplies below.
  std::int16_t arr[3 * 64 + 1];
  std::int16_t* r = arr + n;
  auto main_ref = [&](int k) { return vertical ? top(k - 1) : left(k - 1); };
  auto side_ref = [&](int k) { return vertical ? left(k - 1) : top(k - 1); };
  for (int k = 0; k <= n; ++k) r[k] = static_cast<std::int16_t>(main_ref(k));
  if (angle < 0) {
    const int last = (n * angle) >> 5;
    if (last < -1)
      for (int k = last; k <= -1; ++k)
        r[k] = static_cast<std::int16_t>(side_ref(((k * kInvAngle[p.mode] + 128) >> 8)));
  } else {
    for (int k = n + 1; k <= 2 * n; ++k) r[k] = static_cast<std::int16_t>(main_ref(k));
  }
  // Rows along the main reference (j: y for vertical modes, x for horizontal ones), written
  // straight to dst for vertical modes and transposed from a block for horizontal ones, so
  // that the inner loops are branch-free and contiguous.
  std::uint16_t block[32 * 32];
  std::uint16_t* out = vertical ? dst : block;
  const std::ptrdiff_t out_stride = vertical ? stride : n;
  bool rows_done = false;
#if SIGPU_HEVC_MADD
  if (p.use_simd && have_avx2()) {
    angular_rows_avx2<n>(r, angle, out, out_stride);
    rows_done = true;
  }
#endif
  for (int j = 0; j < n && !rows_done; ++j) {
    const int pos = (j + 1) * angle;
    const int idx = pos >> 5, fact = pos & 31;
    const std::int16_t* src = r + idx + 1;
    std::uint16_t* row = out + j * out_stride;
    if (fact) {
      const std::int16_t f = static_cast<std::int16_t>(fact),
                         g = static_cast<std::int16_t>(32 - fact);
      for (int i = 0; i < n; ++i)
        row[i] = static_cast<std::uint16_t>(
            (std::int32_t{g} * src[i] + std::int32_t{f} * src[i + 1] + 16) >> 5);
    } else {
      for (int i = 0; i < n; ++i) row[i] = static_cast<std::uint16_t>(src[i]);
    }
  }
  if (!vertical) transpose_to(dst, stride, block, n);
  if (p.luma && n < 32) {
    if (p.mode == 26)
      for (int y = 0; y < n; ++y) dst[y * stride] = clip(top(0) + ((left(y) - left(-1)) >> 1));
    else if (p.mode == 10)
      for (int x = 0; x < n; ++x) dst[x] = clip(left(0) + ((top(x) - top(-1)) >> 1));
  }
}

}  // namespace

void gather_intra_refs(const std::uint16_t* plane, std::ptrdiff_t stride, int x, int y, int log2,
                       int unit, std::uint32_t avail, bool corner, int bit_depth,
                       std::int32_t* ref) {
  const int n = 1 << log2;
  const int units = 2 * n / unit;  // per side
  const std::uint32_t left_av = avail & 0xffff, top_av = avail >> 16;
  if (!left_av && !top_av && !corner) {
    std::fill_n(ref, 4 * n + 1, 1 << (bit_depth - 1));
    return;
  }
  // Each run of available units is copied in one loop (the top row's contiguous).
  auto for_runs = [unit](std::uint32_t av, auto&& copy) {
    while (av) {
      const int u = __builtin_ctz(av);
      const int e = u + __builtin_ctz(~(av >> u));
      copy(u * unit, e * unit);
      av &= ~0u << e;
    }
  };
  for_runs(left_av, [&](int a, int b) {
    const std::uint16_t* s = plane + (y + a) * stride + (x - 1);
    for (int j = a; j < b; ++j) ref[2 * n - 1 - j] = s[(j - a) * stride];
  });
  if (corner) ref[2 * n] = plane[(y - 1) * stride + x - 1];
  for_runs(top_av, [&](int a, int b) {
    const std::uint16_t* s = plane + (y - 1) * stride + x;
    for (int j = a; j < b; ++j) ref[2 * n + 1 + j] = s[j];
  });
  const std::uint32_t all = (1u << units) - 1;
  if (left_av == all && top_av == all && corner) return;
  // Substitution in ref's order, a unit at a time: the bottom of the left column up, the
  // corner, the top row left to right. Units before the first available sample take it; later
  // ones take the sample just before them.
  std::int32_t carry;
  int first = units - 1;
  while (first >= 0 && !((left_av >> first) & 1)) --first;
  if (first >= 0) {
    carry = ref[2 * n - (first + 1) * unit];
  } else if (corner) {
    carry = ref[2 * n];
  } else {
    first = 0;
    while (!((top_av >> first) & 1)) ++first;
    carry = ref[2 * n + 1 + first * unit];
  }
  for (int u = units - 1; u >= 0; --u) {
    std::int32_t* r = ref + 2 * n - (u + 1) * unit;
    if ((left_av >> u) & 1)
      carry = r[unit - 1];
    else
      std::fill_n(r, unit, carry);
  }
  if (corner)
    carry = ref[2 * n];
  else
    ref[2 * n] = carry;
  for (int u = 0; u < units; ++u) {
    std::int32_t* r = ref + 2 * n + 1 + u * unit;
    if ((top_av >> u) & 1)
      carry = r[unit - 1];
    else
      std::fill_n(r, unit, carry);
  }
}

SIGPU_HEVC_SIMD_CLONES  // the inner loops vectorise twice as wide with AVX2
    void
    intra_predict(std::int32_t* ref, const IntraParams& p, std::uint16_t* dst,
                  std::ptrdiff_t stride) {
  switch (p.log2) {
    case 2:
      predict<4>(ref, p, dst, stride);
      break;
    case 3:
      predict<8>(ref, p, dst, stride);
      break;
    case 4:
      predict<16>(ref, p, dst, stride);
      break;
    default:
      predict<32>(ref, p, dst, stride);
      break;
  }
}

}  // namespace sigpu::hevc
