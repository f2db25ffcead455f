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
/// neighbouring threads take neighbouring slices of one component (similar work). `scan` is
/// the two scan tables, progressive then interlaced.
SIGPU_HD inline void vld_agent(const VldParams& p, int t, const std::uint8_t* scan) {
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
  std::int16_t* dst = p.coeffs + d.frame * L.coeffs_per_frame() + L.plane_offset(comp) +
                      (static_cast<std::int64_t>(d.picture * L.mbs_per_picture() +
                                                 g.mb_y * L.shape.mb_width + g.mb_x)
                       << (6 + log2_bpm));
  if (int e = decode_component(p.bytes, begin, begin + h.size[comp], g.log2_mbs + log2_bpm,
                               scan + 64 * L.shape.interlaced, dst);
      e)
    damage(e);
}

struct IdctParams {
  const std::int16_t* coeffs;
  const std::uint32_t* mb_info;
  const FrameDesc* frames;
  BatchLayout layout;
  std::int64_t total_blocks;
  std::uint16_t* out;
  std::int64_t frame_samples;
};

/// One 8x8 block of the IDCT kernel's work: which frame, plane, picture and macroblock.
struct IdctTask {
  bool active = false;  ///< inside the batch
  bool coded = false;   ///< has coefficients to transform
  bool damaged = false;
  int frame = 0, plane = 0, picture = 0, mb = 0, sub = 0;
  std::int64_t block = 0;  ///< index of the block within its frame's plane
  std::uint32_t info = 0;
};

SIGPU_HD inline IdctTask idct_task(const IdctParams& p, std::int64_t gb) {
  IdctTask t;
  if (gb >= p.total_blocks) return t;
  const BatchLayout& L = p.layout;
  t.active = true;
  const std::int64_t per_frame = L.blocks_per_frame();
  t.frame = static_cast<int>(gb / per_frame);
  std::int64_t rest = gb - t.frame * per_frame;
  while (rest >= L.plane_blocks(t.plane)) rest -= L.plane_blocks(t.plane++);
  const int log2_bpm = log2_blocks_per_mb(t.plane == 3 ? 0 : t.plane, L.shape.chroma444);
  const int m = static_cast<int>(rest >> log2_bpm);
  t.sub = static_cast<int>(rest & ((1 << log2_bpm) - 1));
  t.picture = m / L.mbs_per_picture();
  t.mb = m - t.picture * L.mbs_per_picture();
  t.block = rest;
  t.info = p.mb_info[static_cast<std::int64_t>(t.frame) * L.mbs_per_frame() + m];
  t.damaged = (t.info & kMbDamaged) != 0;
  t.coded = t.plane < 3 && !t.damaged && !(t.plane > 0 && (t.info & kMbNoChroma));
  return t;
}

/// Row r of a coded block: load, dequantise, row transform, into tile[8 * r ...].
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE void idct_row_agent(const IdctParams& p, const IdctTask& t, int r,
                                               std::int16_t* tile) {
  const BatchLayout& L = p.layout;
  const std::int16_t* src =
      p.coeffs + t.frame * L.coeffs_per_frame() + L.plane_offset(t.plane) + t.block * 64 + 8 * r;
  std::int16_t row[8];
#ifdef __CUDA_ARCH__
  const int4 raw = *reinterpret_cast<const int4*>(src);
  std::memcpy(row, &raw, sizeof row);
#else
  std::memcpy(row, src, sizeof row);
#endif
  const std::uint8_t* q = p.frames[t.frame].qmat[t.plane ? 1 : 0] + 8 * r;
  const int qscale = static_cast<int>(t.info & kMbQscaleMask);
  for (int i = 0; i < 8; ++i) row[i] = dequantise(row[i], scaled_quant(q[i], qscale));
  idct_row<BitDepth>(row);
  for (int i = 0; i < 8; ++i) tile[8 * r + i] = row[i];
}

/// Row r of the block's output: the transformed samples, or the fill of a damaged block or
/// a slice without chroma. Undamaged alpha was written by the VLD kernel.
template <int BitDepth>
SIGPU_HD SIGPU_FORCEINLINE void idct_store_agent(const IdctParams& p, const IdctTask& t, int r,
                                                 const std::int16_t* tile) {
  if (!t.active || (t.plane == 3 && !t.damaged)) return;
  const BatchLayout& L = p.layout;
  const int mb_y = t.mb / L.shape.mb_width, mb_x = t.mb - mb_y * L.shape.mb_width;
  int x, y;
  block_origin(t.plane == 3 ? 0 : t.plane, L.shape.chroma444, mb_x, mb_y, t.sub, x, y);
  const PlaneView v = plane_view(p.out + t.frame * p.frame_samples, L.shape, t.plane, t.picture);
  std::uint16_t fill = no_chroma_value(BitDepth);
  if (t.damaged)
    fill = t.plane == 3 ? static_cast<std::uint16_t>((1u << BitDepth) - 1)
                        : static_cast<std::uint16_t>(1u << (BitDepth - 1));
  for (int i = 0; i < 8; ++i)
    v.put(x + i, y + r, t.coded ? clip_pixel<BitDepth>(tile[8 * r + i]) : fill);
}

}  // namespace sigpu::prores
