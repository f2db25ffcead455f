// Dequantisation and the 8x8 integer IDCT, identical to FFmpeg's ff_prores_idct_10 /
// ff_prores_idct_12 (libavcodec/simple_idct_template.c) including its 16-bit truncations and
// the row pass's DC-only shortcut, which is not the same arithmetic at 12 bits. Written once
// for host and device: the row and column passes take a stride so the CUDA kernel can run
// them on shared memory with one thread per row, then per column.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::prores {

template <int BitDepth>
struct IdctConstants;

// 10-bit output: FFmpeg's 10-bit "extrashift" variant (row shift 13 + 2, column shift 18).
template <>
struct IdctConstants<10> {
  static constexpr int W1 = 22725, W2 = 21407, W3 = 19265, W4 = 16384, W5 = 12873, W6 = 8867,
                       W7 = 4520;
  static constexpr int kRowShift = 15, kColShift = 18;
  static constexpr int kColBias = (1 << (kColShift - 1)) / W4;
};

// 12-bit output: FFmpeg's 12-bit int16 variant (row shift 16, column shift 17).
template <>
struct IdctConstants<12> {
  static constexpr int W1 = 45451, W2 = 42813, W3 = 38531, W4 = 32767, W5 = 25746, W6 = 17734,
                       W7 = 9041;
  static constexpr int kRowShift = 16, kColShift = 17;
  static constexpr int kColBias = (1 << (kColShift - 1)) / W4;
};

/// Arithmetic right shift of a value computed modulo 2^32, as FFmpeg's (int)(a) >> s.
SIGPU_HD SIGPU_FORCEINLINE std::int16_t shift_to_i16(std::uint32_t v, int s) {
  return static_cast<std::int16_t>(static_cast<std::int32_t>(v) >> s);
}

/// One row pass on row[0], row[step], ... row[7 * step].
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE void idct_row(std::int16_t* row, int step = 1) {
  using C = IdctConstants<BitDepth>;
  const int r0 = row[0], r1 = row[step], r2 = row[2 * step], r3 = row[3 * step];
  const int r4 = row[4 * step], r5 = row[5 * step], r6 = row[6 * step], r7 = row[7 * step];
  if (!(r1 | r2 | r3 | r4 | r5 | r6 | r7)) {
    // DC-only rows take FFmpeg's shortcut: (dc + 1) >> 1 for both depths.
    const auto dc = static_cast<std::int16_t>((r0 + 1) >> 1);
    for (int i = 0; i < 8; ++i) row[i * step] = dc;
    return;
  }
  const std::uint32_t u0 = static_cast<std::uint32_t>(r0), u1 = static_cast<std::uint32_t>(r1),
                      u2 = static_cast<std::uint32_t>(r2), u3 = static_cast<std::uint32_t>(r3),
                      u4 = static_cast<std::uint32_t>(r4), u5 = static_cast<std::uint32_t>(r5),
                      u6 = static_cast<std::uint32_t>(r6), u7 = static_cast<std::uint32_t>(r7);
  std::uint32_t a0 = C::W4 * u0 + (1u << (C::kRowShift - 1));
  std::uint32_t a1 = a0, a2 = a0, a3 = a0;
  a0 += C::W2 * u2;
  a1 += C::W6 * u2;
  a2 -= C::W6 * u2;
  a3 -= C::W2 * u2;
  std::uint32_t b0 = C::W1 * u1 + C::W3 * u3;
  std::uint32_t b1 = C::W3 * u1 - C::W7 * u3;
  std::uint32_t b2 = C::W5 * u1 - C::W1 * u3;
  std::uint32_t b3 = C::W7 * u1 - C::W5 * u3;
  a0 += C::W4 * u4 + C::W6 * u6;
  a1 -= C::W4 * u4 + C::W2 * u6;
  a2 += C::W2 * u6 - C::W4 * u4;
  a3 += C::W4 * u4 - C::W6 * u6;
  b0 += C::W5 * u5 + C::W7 * u7;
  b1 -= C::W1 * u5 + C::W5 * u7;
  b2 += C::W7 * u5 + C::W3 * u7;
  b3 += C::W3 * u5 - C::W1 * u7;
  constexpr int s = C::kRowShift;
  row[0] = shift_to_i16(a0 + b0, s);
  row[7 * step] = shift_to_i16(a0 - b0, s);
  row[1 * step] = shift_to_i16(a1 + b1, s);
  row[6 * step] = shift_to_i16(a1 - b1, s);
  row[2 * step] = shift_to_i16(a2 + b2, s);
  row[5 * step] = shift_to_i16(a2 - b2, s);
  row[3 * step] = shift_to_i16(a3 + b3, s);
  row[4 * step] = shift_to_i16(a3 - b3, s);
}

/// One column pass on col[0], col[step], ... (step 8 for a raster block); the +8192 level
/// shift FFmpeg adds to the first row before the columns is applied here.
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE void idct_col(std::int16_t* col, int step = 8) {
  using C = IdctConstants<BitDepth>;
  const int c0 = static_cast<std::int16_t>(col[0] + 8192);
  const std::uint32_t u1 = static_cast<std::uint32_t>(col[step]),
                      u2 = static_cast<std::uint32_t>(col[2 * step]),
                      u3 = static_cast<std::uint32_t>(col[3 * step]),
                      u4 = static_cast<std::uint32_t>(col[4 * step]),
                      u5 = static_cast<std::uint32_t>(col[5 * step]),
                      u6 = static_cast<std::uint32_t>(col[6 * step]),
                      u7 = static_cast<std::uint32_t>(col[7 * step]);
  std::uint32_t a0 = C::W4 * static_cast<std::uint32_t>(c0 + C::kColBias);
  std::uint32_t a1 = a0, a2 = a0, a3 = a0;
  a0 += C::W2 * u2 + C::W4 * u4 + C::W6 * u6;
  a1 += C::W6 * u2 - C::W4 * u4 - C::W2 * u6;
  a2 += C::W2 * u6 - C::W6 * u2 - C::W4 * u4;
  a3 += C::W4 * u4 - C::W2 * u2 - C::W6 * u6;
  const std::uint32_t b0 = C::W1 * u1 + C::W3 * u3 + C::W5 * u5 + C::W7 * u7;
  const std::uint32_t b1 = C::W3 * u1 - C::W7 * u3 - C::W1 * u5 - C::W5 * u7;
  const std::uint32_t b2 = C::W5 * u1 - C::W1 * u3 + C::W7 * u5 + C::W3 * u7;
  const std::uint32_t b3 = C::W7 * u1 - C::W5 * u3 + C::W3 * u5 - C::W1 * u7;
  constexpr int s = C::kColShift;
  col[0] = shift_to_i16(a0 + b0, s);
  col[1 * step] = shift_to_i16(a1 + b1, s);
  col[2 * step] = shift_to_i16(a2 + b2, s);
  col[3 * step] = shift_to_i16(a3 + b3, s);
  col[4 * step] = shift_to_i16(a3 - b3, s);
  col[5 * step] = shift_to_i16(a2 - b2, s);
  col[6 * step] = shift_to_i16(a1 - b1, s);
  col[7 * step] = shift_to_i16(a0 - b0, s);
}

/// Output clipping of FFmpeg's ProRes DSP: [4, 2^depth - 5].
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE std::uint16_t clip_pixel(int v) {
  constexpr int lo = 4, hi = (1 << BitDepth) - 5;
  return static_cast<std::uint16_t>(v < lo ? lo : (v > hi ? hi : v));
}

/// Dequantisation (16-bit products, as FFmpeg) of a raster block.
SIGPU_HD SIGPU_FORCEINLINE std::int16_t dequantise(std::int16_t coeff, std::int16_t scale) {
  return static_cast<std::int16_t>(coeff * scale);
}

/// The whole block: dequantise, rows, columns. `qmat` is the scaled matrix (16-bit entries).
template <int BitDepth>
SIGPU_HD inline void idct_block(std::int16_t* block, const std::int16_t* qmat) {
  for (int i = 0; i < 64; ++i) block[i] = dequantise(block[i], qmat[i]);
  for (int r = 0; r < 8; ++r) idct_row<BitDepth>(block + 8 * r);
  for (int c = 0; c < 8; ++c) idct_col<BitDepth>(block + c);
}

}  // namespace sigpu::prores
