// Interleaving int8 LLRs into the inter-frame decoder's lanes (interframe_lanes.hpp), and the
// hard decisions of int8 LLRs out of them, 16 x 16 bytes at a time with SSE2 unpacks: byte by
// byte, the stores cost as much as an iteration.
// x86-64 only, included where interframe_lanes.hpp is.
#pragma once

#include <emmintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace sigpu::turbo {
namespace {

/// Transposes 16 rows of 16 bytes in place: r[c] byte j becomes r[j] byte c on entry.
[[gnu::always_inline]] inline void transpose16x16(__m128i (&r)[16]) {
  __m128i a[16], b[16], c[16];
  // a[8h + p]: rows 2p and 2p + 1, columns 8h..8h + 7, interleaved.
  for (int p = 0; p < 8; ++p) {
    a[p] = _mm_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
    a[8 + p] = _mm_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
  }
  // b[4k + q]: rows 4q..4q + 3, columns 4k..4k + 3.
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 4; ++q) {
      b[8 * h + q] = _mm_unpacklo_epi16(a[8 * h + 2 * q], a[8 * h + 2 * q + 1]);
      b[8 * h + 4 + q] = _mm_unpackhi_epi16(a[8 * h + 2 * q], a[8 * h + 2 * q + 1]);
    }
  // c[2m + o]: rows 8o..8o + 7, columns 2m and 2m + 1.
  for (int k = 0; k < 4; ++k)
    for (int o = 0; o < 2; ++o) {
      c[4 * k + o] = _mm_unpacklo_epi32(b[4 * k + 2 * o], b[4 * k + 2 * o + 1]);
      c[4 * k + 2 + o] = _mm_unpackhi_epi32(b[4 * k + 2 * o], b[4 * k + 2 * o + 1]);
    }
  for (int m = 0; m < 8; ++m) {
    r[2 * m] = _mm_unpacklo_epi64(c[2 * m], c[2 * m + 1]);
    r[2 * m + 1] = _mm_unpackhi_epi64(c[2 * m], c[2 * m + 1]);
  }
}

/// dst[n W + i] = src[i][n] for n < len and i < lanes (lanes <= W, W a multiple of 16); the
/// lanes from `lanes` up to the next multiple of 16 are written as 0.
inline void interleave_bytes(const std::int8_t* const* src, int lanes, int len, std::int8_t* dst,
                             int W) {
  const int whole = len / 16 * 16;
  for (int i0 = 0; i0 < lanes; i0 += 16) {
    const int m = std::min(16, lanes - i0);
    for (int n0 = 0; n0 < whole; n0 += 16) {
      __m128i r[16];
      for (int j = 0; j < 16; ++j)
        r[j] = j < m ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[i0 + j] + n0))
                     : _mm_setzero_si128();
      transpose16x16(r);
      for (int j = 0; j < 16; ++j)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + std::size_t(n0 + j) * W + i0), r[j]);
    }
    for (int n = whole; n < len; ++n)
      for (int j = 0; j < m; ++j) dst[std::size_t(n) * W + i0 + j] = src[i0 + j][n];
  }
}

/// The hard decisions of lane-interleaved int8 LLRs: bits[i][n] = 1 where src[n W + i] < 0, else
/// 0, for n < len and each lane i < lanes whose bits[i] is not null.
inline void sign_bits(const std::int8_t* src, int W, int lanes, int len,
                      std::uint8_t* const* bits) {
  const int whole = len / 16 * 16;
  const __m128i one = _mm_set1_epi8(1);
  for (int i0 = 0; i0 < lanes; i0 += 16) {
    const int m = std::min(16, lanes - i0);
    for (int n0 = 0; n0 < whole; n0 += 16) {
      __m128i r[16];
      for (int j = 0; j < 16; ++j)
        r[j] =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + std::size_t(n0 + j) * W + i0));
      transpose16x16(r);
      for (int j = 0; j < m; ++j)
        if (bits[i0 + j])
          _mm_storeu_si128(reinterpret_cast<__m128i*>(bits[i0 + j] + n0),
                           _mm_and_si128(_mm_cmplt_epi8(r[j], _mm_setzero_si128()), one));
    }
    for (int j = 0; j < m; ++j)
      if (bits[i0 + j])
        for (int n = whole; n < len; ++n) bits[i0 + j][n] = src[std::size_t(n) * W + i0 + j] < 0;
  }
}

}  // namespace
}  // namespace sigpu::turbo
