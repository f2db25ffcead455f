// What each CUDA thread of the ProRes kernels does, written once for host and device so that
// the kernels' own code runs (and is tested) on the CPU too, the way dav1d's checkasm checks
// kernels against their twins. cuda/kernels.cuh wraps these in thin __global__ functions;
// tests/prores/test_kernel_twin.cpp runs them in loops over the thread indices.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/hd.hpp"
#include "prores/batch_layout.hpp"
#include "prores/idct.hpp"
#include "prores/slice.hpp"
#include "prores/vld.hpp"

namespace sigpu::prores {

SIGPU_HD SIGPU_FORCEINLINE void or_word(std::uint32_t* p, std::uint32_t v) {
#ifdef __CUDA_ARCH__
  atomicOr(p, v);
#else
  __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

struct VldParams {
  const std::uint8_t* bytes;  ///< the packed batch: frames, then descriptors
  const SliceDesc* slices;
  const FrameDesc* frames;
  int total_slices;
  BatchLayout layout;
  std::int16_t* coeffs;    ///< zeroed before the kernel
  std::uint32_t* mb_info;  ///< zeroed before the kernel
  std::uint16_t* out;
  std::int64_t frame_samples;
  std::uint8_t* status;  ///< [slice][4]: VldError per component, zeroed before the kernel
};

/// Thread t of the VLD kernel: component t / total_slices of slice t % total_slices, so that
/// neighbouring threads take neighbouring slices of one component (similar work).
SIGPU_HD inline void vld_agent(const VldParams& p, int t) {
  const int comp = t / p.total_slices, si = t - comp * p.total_slices;
  const SliceDesc d = p.slices[si];
  const BatchLayout& L = p.layout;
  const SliceGeometry g = slice_geometry(static_cast<int>(d.index_in_picture), L.shape.mb_width,
                                         p.frames[d.frame].log2_slice_mbs[d.picture]);
  std::uint32_t* info = p.mb_info + static_cast<std::int64_t>(d.frame) * L.mbs_per_frame() +
                        d.picture * L.mbs_per_picture() + g.mb_y * L.shape.mb_width + g.mb_x;
  const int mbs = 1 << g.log2_mbs;
  auto damage = [&](int e) {
    p.status[4 * si + comp] = static_cast<std::uint8_t>(e);
    for (int i = 0; i < mbs; ++i) or_word(info + i, kMbDamaged);
  };
  if (d.error) {
    if (comp == 0) damage(d.error);
    return;
  }
  SliceHeader h;
  if (int e = parse_slice_header(p.bytes + d.offset, static_cast<int>(d.size), h); e) {
    if (comp == 0) damage(e);
    return;
  }
  const bool no_chroma = h.size[1] + h.size[2] == 0;
  if (comp == 0) {
    const std::uint32_t w = static_cast<std::uint32_t>(h.qscale) | (no_chroma ? kMbNoChroma : 0);
    for (int i = 0; i < mbs; ++i) or_word(info + i, w);
  }
  std::size_t begin = d.offset + static_cast<std::size_t>(h.header_size);
  for (int c = 0; c < comp; ++c) begin += static_cast<std::size_t>(h.size[c]);
  if (comp == 3) {
    std::uint16_t* frame = p.out + d.frame * p.frame_samples;
    if (h.size[3] > 0)
      decode_slice_alpha(p.bytes, begin, begin + h.size[3], frame, L.shape, d.picture, g);
    else  // no alpha coded: opaque, as the CPU decoder
      fill_slice(frame, L.shape, d.picture, g, 3,
                 static_cast<std::uint16_t>((1u << L.shape.bit_depth) - 1));
    return;
  }
  if (comp > 0 && no_chroma) return;
  const int log2_bpm = log2_blocks_per_mb(comp, L.shape.chroma444);
  std::int16_t* dst = p.coeffs + d.frame * L.coeffs_per_frame() + L.plane_offset(comp);
  const std::int64_t first = static_cast<std::int64_t>(d.picture * L.mbs_per_picture() +
                                                       g.mb_y * L.shape.mb_width + g.mb_x)
                             << log2_bpm;
  if (int e = decode_component(
          p.bytes, begin, begin + h.size[comp], g.log2_mbs + log2_bpm,
          [&](int b, int i, std::int16_t v) { dst[tile_coeff_index(first + b, i)] = v; });
      e)
    damage(e);
}

/// Copies 16 bytes; on the device both pointers must be 16-byte aligned (one vector access).
SIGPU_HD SIGPU_FORCEINLINE void copy16(void* dst, const void* src) {
#ifdef __CUDA_ARCH__
  *static_cast<int4*>(dst) = *static_cast<const int4*>(src);
#else
  std::memcpy(dst, src, 16);
#endif
}

struct IdctParams {
  const std::int16_t* coeffs;
  const std::uint32_t* mb_info;
  const FrameDesc* frames;
  BatchLayout layout;
  std::uint16_t* out;
  std::int64_t frame_samples;
};

/// One 8x8 block of the IDCT kernel's work: which frame, plane, picture and macroblock.
struct IdctTask {
  bool active = false;  ///< inside the plane
  bool coded = false;   ///< has coefficients to transform
  bool damaged = false;
  int frame = 0, plane = 0, picture = 0, mb = 0, sub = 0;
  std::uint32_t info = 0;
};

/// The plane and the tile within it of tile `tile` of a frame (the planes' tiles follow each
/// other).
SIGPU_HD SIGPU_FORCEINLINE void idct_tile(const BatchLayout& L, std::int64_t tile, int& plane,
                                          std::int64_t& in_plane) {
  plane = 0;
  in_plane = tile;
  while (plane < L.planes - 1 && in_plane >= L.plane_tiles(plane))
    in_plane -= L.plane_tiles(plane++);
}

/// Block `block` of plane `plane` of frame `frame`.
SIGPU_HD inline IdctTask idct_task(const IdctParams& p, int frame, int plane, std::int64_t block) {
  IdctTask t;
  const BatchLayout& L = p.layout;
  if (block >= L.plane_blocks(plane)) return t;
  t.active = true;
  t.frame = frame;
  t.plane = plane;
  const int log2_bpm = log2_blocks_per_mb(plane == 3 ? 0 : plane, L.shape.chroma444);
  const int m = static_cast<int>(block >> log2_bpm);
  t.sub = static_cast<int>(block & ((1 << log2_bpm) - 1));
  t.picture = m >= L.mbs_per_picture() ? 1 : 0;  // at most two pictures
  t.mb = m - t.picture * L.mbs_per_picture();
  t.info = p.mb_info[static_cast<std::int64_t>(frame) * L.mbs_per_frame() + m];
  t.damaged = (t.info & kMbDamaged) != 0;
  t.coded = plane < 3 && !t.damaged && !(plane > 0 && (t.info & kMbNoChroma));
  return t;
}

/// Shared-memory tile of the IDCT kernel: kTileBlocks raster blocks; a block's stride is 72
/// samples, not 64, so that the four blocks of a warp's column pass fall in different banks
/// (and rows stay 16-byte aligned).
inline constexpr int kTileStride = 72;
using IdctTile = std::int16_t[kTileBlocks][kTileStride];

/// Thread `thread` (0-255) of the load: 8 coefficients of a coefficient tile (plane 0-2), one
/// 16-byte piece of the contiguous 4 KB, put into the raster blocks of `tile` through `scan`.
SIGPU_HD SIGPU_FORCEINLINE void idct_load_agent(const IdctParams& p, int frame, int plane,
                                                std::int64_t tile_in_plane, int thread,
                                                const std::uint8_t* scan, IdctTile& tile) {
  const BatchLayout& L = p.layout;
  alignas(16) std::int16_t v[8];
  copy16(v, p.coeffs + frame * L.coeffs_per_frame() + L.plane_offset(plane) +
                tile_in_plane * 64 * kTileBlocks + thread * 8);
  const int raster = scan[thread >> 2], block = (thread & 3) * 8;
  for (int i = 0; i < 8; ++i) tile[block + i][raster] = v[i];
}

/// Row r of a coded block in place: dequantise, row transform.
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE void idct_row_agent(const IdctParams& p, const IdctTask& t, int r,
                                               std::int16_t* row) {
  alignas(16) std::int16_t v[8];
  copy16(v, row);
  // Eight matrix bytes in one load: FrameDesc rows are 8-byte aligned in the upload.
  std::uint8_t q[8];
  const std::uint8_t* qrow = p.frames[t.frame].qmat[t.plane ? 1 : 0] + 8 * r;
#ifdef __CUDA_ARCH__
  const uint2 qv = *reinterpret_cast<const uint2*>(qrow);
  std::memcpy(q, &qv, sizeof q);
#else
  std::memcpy(q, qrow, sizeof q);
#endif
  const int qscale = static_cast<int>(t.info & kMbQscaleMask);
  for (int i = 0; i < 8; ++i) v[i] = dequantise(v[i], scaled_quant(q[i], qscale));
  idct_row<BitDepth>(v);
  copy16(row, v);
}

/// Which block row thread `thread` of an IDCT thread block stores. Neighbouring threads take
/// neighbouring 8-sample pieces of one picture row, in the block order of the plane's
/// macroblocks (luma: left-right then down; 4:4:4 chroma: down then right; 4:2:2 chroma: down),
/// so that a warp stores two runs of 256 bytes instead of 32 scattered rows. A permutation of
/// (block, row) whatever the plane: blocks that are not where the order expects (at a
/// macroblock row's end) are still stored once, only less coalesced.
SIGPU_HD SIGPU_FORCEINLINE void idct_store_slot(int plane, int chroma444, int thread, int& block,
                                                int& row) {
  static_assert(kTileBlocks == 32);
  const int y = thread >> 4, k = thread & 15, by = y >> 3;
  row = y & 7;
  if (plane == 0 || plane == 3)
    block = ((k >> 1) << 2) | (by << 1) | (k & 1);
  else if (chroma444)
    block = ((k >> 1) << 2) | ((k & 1) << 1) | by;
  else
    block = (k << 1) | by;
}

/// Row r of the block's output from `px` (its eight transformed samples), or the fill of a
/// damaged block or a slice without chroma. Undamaged alpha was written by the VLD kernel.
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE void idct_store_agent(const IdctParams& p, const IdctTask& t, int r,
                                                 const std::int16_t* px) {
  if (!t.active || (t.plane == 3 && !t.damaged)) return;
  const BatchLayout& L = p.layout;
  const int mb_y = t.mb / L.shape.mb_width, mb_x = t.mb - mb_y * L.shape.mb_width;
  int x, y;
  block_origin(t.plane == 3 ? 0 : t.plane, L.shape.chroma444, mb_x, mb_y, t.sub, x, y);
  const PlaneView v = plane_view(p.out + t.frame * p.frame_samples, L.shape, t.plane, t.picture);
  int room;
  std::uint16_t* d = v.row(x, y + r, room);
  if (!d || room <= 0) return;
  std::uint16_t fill = no_chroma_value(BitDepth);
  if (t.damaged)
    fill = t.plane == 3 ? static_cast<std::uint16_t>((1u << BitDepth) - 1)
                        : static_cast<std::uint16_t>(1u << (BitDepth - 1));
  alignas(16) std::int16_t in[8];
  if (t.coded) copy16(in, px);
  alignas(16) std::uint16_t out[8];
  for (int i = 0; i < 8; ++i) out[i] = t.coded ? clip_pixel<BitDepth>(in[i]) : fill;
  // One 16-byte store where the row allows it (widths of a multiple of 8 samples).
  if (room >= 8 && (reinterpret_cast<std::uintptr_t>(d) & 15) == 0)
    copy16(d, out);
  else
    for (int i = 0; i < (room < 8 ? room : 8); ++i) d[i] = out[i];
}

}  // namespace sigpu::prores
