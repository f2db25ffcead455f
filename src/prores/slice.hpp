// Per-slice steps shared by the CPU decoder and the CUDA kernels: placing decoded blocks,
// alpha, the no-chroma fill and concealment of damaged slices.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "prores/geometry.hpp"
#include "prores/idct.hpp"
#include "prores/vld.hpp"

namespace sigpu::prores {

/// One entry of the scaled quantisation matrix; FFmpeg keeps it in 16 bits.
SIGPU_HD SIGPU_FORCEINLINE std::int16_t scaled_quant(std::uint8_t m, int qscale) {
  return static_cast<std::int16_t>(m * qscale);
}

/// Writes an IDCT output block (raster, clipped here) at (x, y) in picture rows.
template <int BitDepth>
SIGPU_HD inline void put_block(const std::int16_t* px, const PlaneView& v, int x, int y) {
  for (int r = 0; r < 8; ++r) {
    int room;
    std::uint16_t* d = v.row(x, y + r, room);
    if (!d) return;  // rows only grow downwards
    const int n = room < 8 ? room : 8;
    for (int c = 0; c < n; ++c) d[c] = clip_pixel<BitDepth>(px[8 * r + c]);
  }
}

/// Fills plane `p` over the slice's macroblocks (16 picture rows).
SIGPU_HD inline void fill_slice(std::uint16_t* frame, const FrameShape& s, int picture,
                                const SliceGeometry& g, int p, std::uint16_t value) {
  const PlaneView v = plane_view(frame, s, p, picture);
  const int mb_px = (p == 1 || p == 2) && !s.chroma444 ? 8 : 16;
  const int x0 = g.mb_x * mb_px, w = mb_px << g.log2_mbs;
  for (int y = 0; y < 16; ++y)
    for (int x = 0; x < w; ++x) v.put(x0 + x, g.mb_y * 16 + y, value);
}

/// Chroma value FFmpeg writes when a slice codes no chroma.
SIGPU_HD SIGPU_FORCEINLINE std::uint16_t no_chroma_value(int bit_depth) {
  return bit_depth == 10 ? 511 : 511 * 4;
}

/// Conceals a damaged slice: mid grey, alpha opaque.
SIGPU_HD inline void conceal_slice(std::uint16_t* frame, const FrameShape& s, int picture,
                                   const SliceGeometry& g) {
  const auto grey = static_cast<std::uint16_t>(1u << (s.bit_depth - 1));
  for (int p = 0; p < 3; ++p) fill_slice(frame, s, picture, g, p, grey);
  if (s.alpha_bits)
    fill_slice(frame, s, picture, g, 3, static_cast<std::uint16_t>((1u << s.bit_depth) - 1));
}

/// Decodes the alpha of a slice straight into the alpha plane.
SIGPU_HD inline void decode_slice_alpha(const std::uint8_t* base, std::size_t begin,
                                        std::size_t end, std::uint16_t* frame, const FrameShape& s,
                                        int picture, const SliceGeometry& g) {
  const PlaneView v = plane_view(frame, s, 3, picture);
  const int strip_width = 16 << g.log2_mbs;
  const int x0 = g.mb_x * 16, y0 = g.mb_y * 16;
  decode_alpha(base, begin, end, strip_width * 16, s.alpha_bits, s.bit_depth,
               [&](int i, std::uint16_t a) {
                 const int row = i >> (4 + g.log2_mbs);
                 v.put(x0 + (i & (strip_width - 1)), y0 + row, a);
               });
}

}  // namespace sigpu::prores
