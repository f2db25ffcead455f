// The CUDA kernels of the HEVC in-loop filters. They hold only the tiling; every decision and
// every sample equation comes from deblock.hpp and sao.hpp, the code the CPU reference runs.
//
// Deblocking works on 8x8 boundary blocks shifted by 4 samples from the edge grid (the Tegra K1
// paper's decomposition): the block around the grid point (8i, 8j) spans x 8i-4..8i+3 and
// y 8j-4..8j+3. It holds both 4-line segments of the vertical edge x = 8i and both 4-sample
// segments of the horizontal edge y = 8j, and every sample those read or write (a luma edge
// reads 4 and writes at most 3 samples on each side, chroma 2 and 1). Vertical filtering inside
// the block therefore produces exactly the vertically filtered picture there, and horizontal
// filtering then reads only samples the block itself finished: the blocks are independent and
// one launch does the whole picture, vertical then horizontal per block. Chroma (4:2:0) uses
// the same blocks in chroma samples, its edge grid being 8 chroma samples too.
//
// SAO reads deblocked neighbours, so deblocking writes to a second buffer and SAO, the second
// launch, reads that and writes the planes. Without SAO, deblocking works in place.
//
// The kernels are static (one copy per translation unit) and use nothing of CUDA beyond
// threadIdx, blockIdx, __syncthreads, uint2 and uint4, so that a CPU test can run this very
// code under a small emulation of those (tests/hevc_filter/test_kernels_on_cpu.cpp).
#pragma once

#include <cstdint>

#include <sigpu/hevc_filter.hpp>

#include "core/hd.hpp"
#include "hevc_filter/deblock.hpp"
#include "hevc_filter/picture.hpp"
#include "hevc_filter/sao.hpp"

namespace sigpu::hevc_filter::cuda {

/// Plane c's pointer and stride by selects (see Geometry::depth).
template <typename T>
__device__ inline T of(const T (&a)[3], int c) {
  return c == 0 ? a[0] : (c == 1 ? a[1] : a[2]);
}

/// Boundary blocks per thread block, along x: 16 blocks x 8 lines = 128 threads, a tile of 128
/// columns x 8 rows.
constexpr int kDeblockBlocks = 16;
constexpr int kDeblockThreads = kDeblockBlocks * 8;
constexpr int kTileCols = kDeblockBlocks * 8;
constexpr int kTileStride = kTileCols + 4;  // 8-byte rows; column walks hit distinct banks

/// Copies the tile's rows between a plane and shared memory: in 4-sample pieces (8-byte
/// accesses, 16 threads per row) when the plane allows it, else sample by sample. The tile
/// starts 4 samples before the 8-grid and plane widths are multiples of 4, so a piece is wholly
/// inside or wholly outside the picture.
template <bool ToTile>
__device__ inline void copy_tile(std::uint16_t (&tile)[8][kTileStride], std::uint16_t* plane,
                                 std::ptrdiff_t stride, bool vec, int x0, int y0, int w, int h) {
  const int tid = threadIdx.y * 8 + threadIdx.x;
  if (vec) {
    const int r = tid >> 4, col = (tid & 15) * 8, y = y0 + r;
    if (y < 0 || y >= h) return;
    SIGPU_UNROLL
    for (int k = 0; k < 8; k += 4) {
      const int x = x0 + col + k;
      if (x < 0 || x + 4 > w) continue;
      uint2* t = reinterpret_cast<uint2*>(&tile[r][col + k]);
      uint2* p = reinterpret_cast<uint2*>(plane + y * stride + x);
      if constexpr (ToTile)
        *t = *p;
      else
        *p = *t;
    }
    return;
  }
  const int x = x0 + tid;
  if (x < 0 || x >= w) return;
  for (int r = 0; r < 8; ++r) {
    const int y = y0 + r;
    if (y < 0 || y >= h) continue;
    if constexpr (ToTile)
      tile[r][tid] = plane[y * stride + x];
    else
      plane[y * stride + x] = tile[r][tid];
  }
}

/// Boundary-block grid of component c: block i covers x 8i-4..8i+3, so i runs to (w + 3) / 8.
__host__ __device__ inline int boundary_blocks(int plane_size) {
  return (plane_size + 11) / 8;
}

/// One thread block: 16 boundary blocks side by side in row j of component blockIdx.z.
/// threadIdx.x is the line (row for the vertical edge, column for the horizontal one) within
/// boundary block threadIdx.y.
static __global__ void __launch_bounds__(kDeblockThreads)
    deblock_kernel(Geometry g, SideInfo s, Planes src, Planes dst, bool vec_src, bool vec_dst) {
  const int c = blockIdx.z;
  const int w = g.plane_width(c), h = g.plane_height(c), sh = Geometry::shift(c);
  const int i0 = blockIdx.x * kDeblockBlocks, j = blockIdx.y;
  if (i0 >= boundary_blocks(w) || j >= boundary_blocks(h)) return;  // chroma is smaller
  __shared__ __align__(16) std::uint16_t tile[8][kTileStride];
  const int x0 = 8 * i0 - 4, y0 = 8 * j - 4;
  copy_tile<true>(tile, of(src.data, c), of(src.stride, c), vec_src, x0, y0, w, h);
  __syncthreads();

  const int t = threadIdx.x, b = threadIdx.y, half = t >> 2;
  const int max_value = (1 << g.depth(c)) - 1;
  // Vertical edge x = 8 (i0 + b), tile column 8b + 4; this thread's segment starts at row 4 half.
  {
    const int ex = 8 * (i0 + b), seg_y = y0 + 4 * half;
    EdgeParams e;
    LumaDecision d;
    if (ex > 0 && ex < w && seg_y >= 0 && seg_y < h) {
      e = segment_params(g, s, c, (ex << sh) >> 2, (seg_y << sh) >> 2, true);
      if (e.tc && c == 0) d = decide_luma(&tile[4 * half][8 * b + 4], 1, kTileStride, e.beta, e.tc);
    }
    __syncthreads();  // every decision has read its lines before any line changes
    if (e.tc) {
      if (c == 0) {
        if (d.mode) filter_luma_line(&tile[t][8 * b + 4], 1, d, e, max_value);
      } else {
        filter_chroma_line(&tile[t][8 * b + 4], 1, e, max_value);
      }
    }
    __syncthreads();
  }
  // Horizontal edge y = 8j, tile row 4; this thread's column 8b + t, segment from column
  // 8b + 4 half.
  {
    const int ey = 8 * j, seg_x = x0 + 8 * b + 4 * half;
    EdgeParams e;
    LumaDecision d;
    if (ey > 0 && ey < h && seg_x >= 0 && seg_x < w) {
      e = segment_params(g, s, c, (seg_x << sh) >> 2, (ey << sh) >> 2, false);
      if (e.tc && c == 0) d = decide_luma(&tile[4][8 * b + 4 * half], kTileStride, 1, e.beta, e.tc);
    }
    __syncthreads();
    if (e.tc) {
      if (c == 0) {
        if (d.mode) filter_luma_line(&tile[4][8 * b + t], kTileStride, d, e, max_value);
      } else {
        filter_chroma_line(&tile[4][8 * b + t], kTileStride, e, max_value);
      }
    }
    __syncthreads();
  }

  copy_tile<false>(tile, of(dst.data, c), of(dst.stride, c), vec_dst, x0, y0, w, h);
}

/// SAO: each thread filters a run of 8 samples of one row, which never straddles a CTB (chroma
/// CTBs are 8 samples wide at the least). 32 x 8 threads cover 256 x 8 samples.
constexpr int kSaoRun = 8;
constexpr int kSaoThreadsX = 32, kSaoThreadsY = 8;

/// Samples x - 1 .. x + 8 of a row into r[0..9]: one 16-byte load for the run (the deblocked
/// copy's rows are 16-byte aligned and padded to a multiple of 8 samples), one sample each side
/// where it exists (the others are never used: sao_edge_sample rejects them by position).
__device__ inline void load_run(const std::uint16_t* row, int x, int w, int (&r)[kSaoRun + 2]) {
  const uint4 v = *reinterpret_cast<const uint4*>(row + x);
  const unsigned words[4] = {v.x, v.y, v.z, v.w};
  SIGPU_UNROLL
  for (int k = 0; k < 4; ++k) {
    r[1 + 2 * k] = int(words[k] & 0xffff);
    r[2 + 2 * k] = int(words[k] >> 16);
  }
  r[0] = x > 0 ? row[x - 1] : 0;
  r[kSaoRun + 1] = x + kSaoRun < w ? row[x + kSaoRun] : 0;
}

/// r[k + 1 + d] for a run position k known at compile time and d in -1..1 (a select, so the
/// arrays stay in registers).
__device__ inline int pick(const int (&r)[kSaoRun + 2], int k, int d) {
  return d < 0 ? r[k] : (d == 0 ? r[k + 1] : r[k + 2]);
}

/// src is the deblocked copy; dst the planes.
static __global__ void __launch_bounds__(kSaoThreadsX* kSaoThreadsY)
    sao_kernel(Geometry g, SideInfo s, Planes src, Planes dst) {
  const int c = blockIdx.z, sh = Geometry::shift(c);
  const int w = g.plane_width(c), h = g.plane_height(c);
  const int x = (blockIdx.x * kSaoThreadsX + threadIdx.x) * kSaoRun;
  const int y = blockIdx.y * kSaoThreadsY + threadIdx.y;
  if (x >= w || y >= h) return;
  const std::ptrdiff_t stride = of(src.stride, c);
  const std::uint16_t* in = of(src.data, c) + y * stride;
  int cur[kSaoRun + 2];
  load_run(in, x, w, cur);
  int out[kSaoRun];
  SIGPU_UNROLL
  for (int k = 0; k < kSaoRun; ++k) out[k] = cur[k + 1];
  const int ctb_x = (x << sh) >> g.log2_ctb, ctb_y = (y << sh) >> g.log2_ctb;
  const CtbParams& ctb = s.ctbs[ctb_y * g.ctbs_w + ctb_x];  // L1 serves the run's reads
  const int type = ctb.sao_type[c], bd = g.depth(c);
  if (type == 1) {
    const std::uint32_t offsets = sao_pack(ctb.sao_offset[c]);
    SIGPU_UNROLL
    for (int k = 0; k < kSaoRun; ++k)
      if (x + k < w && !sao_exempt(g, s, ctb, c, x + k, y))
        out[k] = sao_band(out[k], ctb.sao_arg[c], offsets, bd);
  } else if (type == 2) {
    int dx, dy;
    sao_edge_neighbours(ctb.sao_arg[c], dx, dy);
    int up[kSaoRun + 2] = {}, down[kSaoRun + 2] = {};
    if (dy && y > 0) load_run(in - stride, x, w, up);
    if (dy && y + 1 < h) load_run(in + stride, x, w, down);
    SIGPU_UNROLL
    for (int k = 0; k < kSaoRun; ++k) {
      const int a = dy ? pick(up, k, dx) : pick(cur, k, dx);
      const int b = dy ? pick(down, k, -dx) : pick(cur, k, -dx);
      if (x + k < w && !sao_exempt(g, s, ctb, c, x + k, y))
        out[k] = sao_edge_sample(g, ctb, c, ctb_x, ctb_y, x + k, y, dx, dy, out[k], a, b);
    }
  }
  std::uint16_t* o = of(dst.data, c) + y * of(dst.stride, c) + x;
  if (x + kSaoRun <= w && (reinterpret_cast<std::uintptr_t>(o) & 15) == 0) {
    uint4 v;
    v.x = unsigned(out[0]) | unsigned(out[1]) << 16;
    v.y = unsigned(out[2]) | unsigned(out[3]) << 16;
    v.z = unsigned(out[4]) | unsigned(out[5]) << 16;
    v.w = unsigned(out[6]) | unsigned(out[7]) << 16;
    *reinterpret_cast<uint4*>(o) = v;
  } else {
    SIGPU_UNROLL
    for (int k = 0; k < kSaoRun; ++k)
      if (x + k < w) o[k] = std::uint16_t(out[k]);
  }
}

/// Launch shapes (grid or block), for the driver and the CPU emulation alike.
struct Shape {
  unsigned x, y, z;
};
constexpr Shape kDeblockBlock{8, kDeblockBlocks, 1};
constexpr Shape kSaoBlock{kSaoThreadsX, kSaoThreadsY, 1};
inline Shape deblock_grid(const Geometry& g) {
  return {unsigned(boundary_blocks(g.width) + kDeblockBlocks - 1) / kDeblockBlocks,
          unsigned(boundary_blocks(g.height)), unsigned(g.planes)};
}
inline Shape sao_grid(const Geometry& g) {
  const int cols = kSaoThreadsX * kSaoRun;
  return {unsigned(g.width + cols - 1) / cols, unsigned(g.height + kSaoThreadsY - 1) / kSaoThreadsY,
          unsigned(g.planes)};
}

/// Row stride of the deblocked copy SAO reads: a multiple of 8 samples, for its 16-byte loads.
inline int scratch_stride(int plane_width) {
  return (plane_width + 7) & ~7;
}

/// Can the deblocking kernel move 4 samples (8 bytes) at a time to and from these planes?
inline bool aligned8(const Planes& p, int planes) {
  for (int c = 0; c < planes; ++c)
    if (reinterpret_cast<std::uintptr_t>(p.data[c]) % 8 || p.stride[c] % 4) return false;
  return true;
}

}  // namespace sigpu::hevc_filter::cuda
