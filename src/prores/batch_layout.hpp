// How a batch of same-shape frames is laid out in device memory for the CUDA decoder: the
// slice descriptors the host builds from the slice tables, the coefficient planes the VLD
// kernel fills (in tiles of 32 blocks, see tile_coeff_index), and the per-macroblock
// quantiser/damage words the IDCT kernel reads.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "prores/geometry.hpp"

namespace sigpu::prores {

/// One slice of the batch. Its macroblock position is not stored: the kernels derive it from
/// index_in_picture, mb_width and the picture's log2 slice size.
struct SliceDesc {
  std::uint32_t offset;  ///< byte offset of the slice in the packed batch buffer
  std::uint32_t size;
  std::uint32_t index_in_picture;
  std::uint16_t frame;
  std::uint8_t picture;
  std::uint8_t error;  ///< VldError found by the host parser
};

/// Per frame: the picture's slice sizes and the quantisation matrices (raster order).
struct FrameDesc {
  std::int32_t log2_slice_mbs[2];
  std::uint8_t qmat[2][64];
};

/// Bits of a macroblock's info word.
inline constexpr std::uint32_t kMbQscaleMask = 0x3FF;
inline constexpr std::uint32_t kMbDamaged = 1u << 16;
inline constexpr std::uint32_t kMbNoChroma = 1u << 17;

/// 8x8 blocks per coefficient tile: the IDCT kernel's thread block works on one tile.
inline constexpr int kTileBlocks = 32;

/// Where coefficient i (in coding order, 0-63) of block `block` of a plane lies in the plane's
/// coefficients. A tile holds coding position i of its 32 blocks side by side, so that the VLD,
/// which walks position by position across a slice's blocks, stores sequentially (scattered
/// 2-byte stores over a slice's whole 4 KB kept the GPU's L2 cache thrashing), and the IDCT
/// kernel reads a tile as one contiguous 4 KB run.
SIGPU_HD SIGPU_FORCEINLINE std::int64_t tile_coeff_index(std::int64_t block, int i) {
  return ((block >> 5) << 11) | (i << 5) | (block & 31);
}

struct BatchLayout {
  FrameShape shape;
  int pictures = 1;
  int planes = 3;  ///< 4 with alpha

  SIGPU_HD int mbs_per_picture() const { return shape.mb_width * shape.mb_height; }
  SIGPU_HD int mbs_per_frame() const { return mbs_per_picture() * pictures; }
  /// 8x8 blocks of plane p (0-3) in one frame; the alpha plane counts as luma-shaped blocks
  /// that only the IDCT kernel's concealment writes.
  SIGPU_HD std::int64_t plane_blocks(int p) const {
    return static_cast<std::int64_t>(mbs_per_frame())
           << log2_blocks_per_mb(p == 3 ? 0 : p, shape.chroma444);
  }
  /// Tiles of plane p in one frame, the last one possibly partial.
  SIGPU_HD std::int64_t plane_tiles(int p) const {
    return (plane_blocks(p) + kTileBlocks - 1) / kTileBlocks;
  }
  SIGPU_HD std::int64_t tiles_per_frame() const {
    std::int64_t n = 0;
    for (int p = 0; p < planes; ++p) n += plane_tiles(p);
    return n;
  }
  /// Coefficients of plane p (0-2) in one frame: whole tiles.
  SIGPU_HD std::int64_t plane_coeffs(int p) const { return plane_tiles(p) * 64 * kTileBlocks; }
  SIGPU_HD std::int64_t plane_offset(int p) const {
    std::int64_t o = 0;
    for (int i = 0; i < p; ++i) o += plane_coeffs(i);
    return o;
  }
  SIGPU_HD std::int64_t coeffs_per_frame() const { return plane_offset(3); }
};

}  // namespace sigpu::prores
