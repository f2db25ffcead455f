// Where slices, blocks and samples go: derived from the macroblock width and the log2 slice
// size alone (no per-slice table), so the CUDA kernels compute the same placement as the CPU.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::prores {

SIGPU_HD SIGPU_FORCEINLINE int popcount32(unsigned x) {
#ifdef __CUDA_ARCH__
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

SIGPU_HD SIGPU_FORCEINLINE int floor_log2(unsigned x) {
#ifdef __CUDA_ARCH__
  return 31 - __clz(static_cast<int>(x));
#else
  return 31 - __builtin_clz(x);
#endif
}

/// Slices in one macroblock row: full-size slices, then one slice per set bit of the rest.
SIGPU_HD SIGPU_FORCEINLINE int slices_per_row(int mb_width, int log2_slice_mbs) {
  return (mb_width >> log2_slice_mbs) +
         popcount32(static_cast<unsigned>(mb_width) & ((1u << log2_slice_mbs) - 1));
}

struct SliceGeometry {
  int mb_x = 0, mb_y = 0;
  int log2_mbs = 0;  ///< the slice covers 1 << log2_mbs macroblocks
};

/// Position of slice `index` of a picture (RDD 36 section 6.3): each row is covered by slices
/// of 1 << log2_slice_mbs macroblocks, the remainder by slices of decreasing powers of two.
SIGPU_HD inline SliceGeometry slice_geometry(int index, int mb_width, int log2_slice_mbs) {
  const int per_row = slices_per_row(mb_width, log2_slice_mbs);
  const int row = index / per_row;
  const int k = index - row * per_row;
  const int full = mb_width >> log2_slice_mbs;
  if (k < full) return {k << log2_slice_mbs, row, log2_slice_mbs};
  unsigned rest = static_cast<unsigned>(mb_width) & ((1u << log2_slice_mbs) - 1);
  int x = full << log2_slice_mbs;
  for (int j = k - full;; --j) {
    const int top = floor_log2(rest);
    if (j == 0) return {x, row, top};
    x += 1 << top;
    rest &= ~(1u << top);
  }
}

/// The shape of a coded frame, enough to place every sample. Plain data for the device.
struct FrameShape {
  int width = 0, height = 0;
  int chroma444 = 0;   ///< 1: 4:4:4, 0: 4:2:2
  int interlaced = 0;  ///< two pictures (fields)
  int top_first = 1;   ///< first picture holds the even lines
  int alpha_bits = 0;  ///< 0, 8 or 16
  int bit_depth = 10;  ///< output precision, 10 or 12
  int mb_width = 0;    ///< macroblocks per row
  int mb_height = 0;   ///< macroblock rows per picture
};

/// A 16-bit output plane; rows of picture `field` of an interlaced frame are every other line.
struct PlaneView {
  std::uint16_t* data = nullptr;
  int width = 0, height = 0;
  int row_step = 1, row_offset = 0;

  SIGPU_HD SIGPU_FORCEINLINE void put(int x, int y, std::uint16_t v) const {
    const int fy = y * row_step + row_offset;
    if (x < width && fy < height) data[static_cast<std::int64_t>(fy) * width + x] = v;
  }
  /// Row y (picture rows) from column x, or null below the plane; `room` is how many samples
  /// of the row remain from x.
  SIGPU_HD SIGPU_FORCEINLINE std::uint16_t* row(int x, int y, int& room) const {
    const int fy = y * row_step + row_offset;
    room = width - x;
    return fy < height ? data + static_cast<std::int64_t>(fy) * width + x : nullptr;
  }
};

/// Plane `p` (0 Y, 1 Cb, 2 Cr, 3 A) of a frame laid out as prores::Frame::samples, for the
/// picture (field) `picture`.
SIGPU_HD inline PlaneView plane_view(std::uint16_t* frame, const FrameShape& s, int p,
                                     int picture) {
  const int cw = s.chroma444 ? s.width : (s.width + 1) >> 1;
  const std::int64_t luma = static_cast<std::int64_t>(s.width) * s.height;
  const std::int64_t chroma = static_cast<std::int64_t>(cw) * s.height;
  PlaneView v;
  v.width = (p == 1 || p == 2) ? cw : s.width;
  v.height = s.height;
  v.data = frame + (p == 0 ? 0 : p == 1 ? luma : p == 2 ? luma + chroma : luma + 2 * chroma);
  if (s.interlaced) {
    v.row_step = 2;
    // The first picture goes to the even lines when the top field comes first.
    v.row_offset = (picture == 0) == (s.top_first != 0) ? 0 : 1;
  }
  return v;
}

/// Samples in a whole frame of this shape (every plane).
SIGPU_HD inline std::int64_t frame_samples(const FrameShape& s) {
  const int cw = s.chroma444 ? s.width : (s.width + 1) >> 1;
  return static_cast<std::int64_t>(s.height) *
         (2 * s.width + 2 * cw - (s.alpha_bits ? 0 : s.width));
}

/// Top-left sample (in picture rows) of block `b` of a slice starting at macroblock (mb_x, mb_y)
/// in plane `p`: luma blocks go left-right then down in a macroblock, 4:4:4 chroma blocks down
/// then right, 4:2:2 chroma blocks down.
SIGPU_HD SIGPU_FORCEINLINE void block_origin(int p, int chroma444, int mb_x, int mb_y, int b,
                                             int& x, int& y) {
  if (p == 0) {
    x = ((mb_x + (b >> 2)) << 4) + ((b & 1) << 3);
    y = (mb_y << 4) + ((b & 2) << 2);
  } else if (chroma444) {
    x = ((mb_x + (b >> 2)) << 4) + ((b & 2) << 2);
    y = (mb_y << 4) + ((b & 1) << 3);
  } else {
    x = (mb_x + (b >> 1)) << 3;
    y = (mb_y << 4) + ((b & 1) << 3);
  }
}

/// log2 of the 8x8 blocks per macroblock in plane p.
SIGPU_HD SIGPU_FORCEINLINE int log2_blocks_per_mb(int p, int chroma444) {
  return p == 0 || chroma444 ? 2 : 1;
}

}  // namespace sigpu::prores
