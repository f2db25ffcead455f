// The residual stage's CUDA kernel: every coded transform block's residual (dequantisation and
// inverse transform) into int16 planes, the same samples as residual_stage_cpu. It holds only
// the tiling; every formula comes from tu_residual.hpp, the code the CPU runs.
//
// A thread block of kResidualThreads threads takes a tile of 1024 coefficients: one 32x32 block,
// four 16x16, sixteen 8x8 or sixty-four 4x4 blocks, all of one size (the host groups the coded
// blocks by size, TuOrder). The blocks' coefficients are scattered (dequantised) into a zeroed
// tile in shared memory, one warp per transform block; the vertical pass then runs on the coded
// columns and reads the coded rows only, the horizontal pass reads only the coded columns
// (TuRecords::cols, rows), and each thread writes its samples to the planes.
//
// The kernel is static (one copy per translation unit) and uses nothing of CUDA beyond
// threadIdx, blockIdx and __syncthreads, so that a CPU test runs this very code under
// tests/support/cuda_emulation.hpp (tests/hevc/test_residual_stage.cpp).
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc::cuda {

constexpr int kResidualThreads = 256;
constexpr int kResidualTile = 1024;  ///< coefficients per thread block
constexpr int kMaxTusPerTile = kResidualTile / 16;

/// The kernel's arguments: the picture's records and parameters, in device memory (host memory
/// under the emulation).
struct ResidualArgs {
  TuArrays tu;
  const std::uint32_t* coeffs;        ///< PictureRecords::coeffs
  const std::uint32_t* order;         ///< TuOrder::tu
  std::uint32_t order_begin[5];       ///< TuOrder::begin
  std::uint32_t tile_begin[5];        ///< the first thread block of each size (residual_tiles)
  ResidualParams params;              ///< scaling: the factors' table in device memory
  const TransformMatrices* matrices;  ///< kTransformMatrices in device memory
  ResidualPlanes out;
};

/// Thread blocks per size for TuOrder::begin: tile_begin[log2 - 2] is the first of size log2,
/// tile_begin[4] the grid's size.
inline void residual_tiles(const std::uint32_t (&order_begin)[5], std::uint32_t (&tile_begin)[5]) {
  tile_begin[0] = 0;
  for (int s = 0; s < 4; ++s) {
    const std::uint32_t per_tile = kResidualTile >> (2 * (s + 2));
    tile_begin[s + 1] =
        tile_begin[s] + (order_begin[s + 1] - order_begin[s] + per_tile - 1) / per_tile;
  }
}

/// The shared memory of one thread block, owned by the kernel.
struct ResidualStorage {
  std::int32_t coeffs[kResidualTile];  ///< scaled coefficients d, then (bypass) levels
  std::int32_t mid[kResidualTile];     ///< the vertical pass's output
  std::int16_t matrix[32 * 32];        ///< the DCT of the tile's size
  std::int16_t dst[16];
  struct Slot {
    TuView tu;
    TuKind kind;
    bool used;
  } slots[kMaxTusPerTile];
};
static_assert(sizeof(ResidualStorage) <= 48 * 1024, "static shared memory is at most 48 KB");

/// One thread block's tile of transform blocks of 1 << Log2 samples a side.
template <int Log2>
class AgentResidual {
 public:
  static constexpr int N = 1 << Log2, NN = N * N, kTus = kResidualTile / NN;

  __device__ AgentResidual(ResidualStorage& s, const ResidualArgs& a) : s_(s), a_(a) {}

  /// Tile `tile` of this size's blocks: TuOrder::tu[first + tile * kTus ...].
  __device__ void run(std::uint32_t tile) {
    const int t = threadIdx.x;
    const std::uint32_t first = a_.order_begin[Log2 - 2] + tile * kTus;
    const std::uint32_t end = a_.order_begin[Log2 - 1];
    if (t < kTus) {
      ResidualStorage::Slot& slot = s_.slots[t];
      slot.used = first + t < end;
      if (slot.used) {
        slot.tu = a_.tu[a_.order[first + t]];
        slot.kind = tu_kind(slot.tu);
      }
    }
    for (int i = t; i < NN; i += kResidualThreads) s_.matrix[i] = a_.matrices->dct[Log2 - 2][i];
    if (Log2 == 2 && t < 16) s_.dst[t] = a_.matrices->dst[t];
    for (int i = t; i < kResidualTile; i += kResidualThreads) s_.coeffs[i] = 0;
    __syncthreads();
    scatter();
    __syncthreads();
    vertical();
    __syncthreads();
    horizontal();
  }

 private:
  /// Each warp its blocks' coefficients, dequantised (or, bypassed, as they are), a lane each.
  __device__ void scatter() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int g = warp; g < kTus; g += kResidualThreads / 32) {
      const ResidualStorage::Slot& slot = s_.slots[g];
      if (!slot.used) continue;
      const TuView& tu = slot.tu;
      const std::uint32_t* c = a_.coeffs + tu.coeff_begin;
      std::int32_t* d = s_.coeffs + g * NN;
      if (slot.kind == TuKind::bypass) {
        for (int k = lane; k < tu.coeff_count; k += 32) d[coeff_index(c[k])] = coeff_level(c[k]);
      } else {
        const Dequantizer scale(Log2, tu.qp, tu_bit_depth(a_.params, tu),
                                tu_scaling(a_.params, tu));
        for (int k = lane; k < tu.coeff_count; k += 32) {
          const int i = coeff_index(c[k]);
          d[i] = scale(coeff_level(c[k]), i);
        }
      }
    }
  }

  __device__ const std::int16_t* matrix(TuKind kind) const {
    return Log2 == 2 && kind == TuKind::dst ? s_.dst : s_.matrix;
  }

  /// mid[y][x] of the coded columns x: the coded rows' coefficients times the matrix's column y.
  __device__ void vertical() {
    for (int i = threadIdx.x; i < kResidualTile; i += kResidualThreads) {
      const int g = i / NN, y = i % NN / N, x = i % N;
      const ResidualStorage::Slot& slot = s_.slots[g];
      if (!slot.used || slot.kind == TuKind::skip || slot.kind == TuKind::bypass ||
          x >= slot.tu.cols)
        continue;
      const std::int16_t* m = matrix(slot.kind);
      const std::int32_t* d = s_.coeffs + g * NN + x;
      std::int32_t sum = 0;
      for (int j = 0; j < slot.tu.rows; ++j) sum += std::int32_t{m[j * N + y]} * d[j * N];
      s_.mid[i] = first_pass(sum);
    }
  }

  /// The residual of each sample: the row's coded columns of mid times the matrix's column x,
  /// or the transform-skipped or bypassed coefficient; to the planes.
  __device__ void horizontal() {
    for (int i = threadIdx.x; i < kResidualTile; i += kResidualThreads) {
      const int g = i / NN, y = i % NN / N, x = i % N;
      const ResidualStorage::Slot& slot = s_.slots[g];
      if (!slot.used) continue;
      const TuView& tu = slot.tu;
      const int bit_depth = tu_bit_depth(a_.params, tu);
      std::int32_t r;
      if (slot.kind == TuKind::bypass) {
        r = s_.coeffs[i];
      } else if (slot.kind == TuKind::skip) {
        r = transform_skip_sample(s_.coeffs[i], Log2, bit_depth);
      } else {
        const std::int16_t* m = matrix(slot.kind);
        const std::int32_t* row = s_.mid + g * NN + y * N;
        std::int32_t sum = 0;
        for (int j = 0; j < tu.cols; ++j) sum += std::int32_t{m[j * N + x]} * row[j];
        r = second_pass(sum, bit_depth);
      }
      const int c = tu.comp;
      a_.out.data[c][(tu.y + y) * a_.out.stride[c] + tu.x + x] = saturate16(r);
    }
  }

  ResidualStorage& s_;
  const ResidualArgs& a_;
};

/// One thread block per tile; the tiles of each size follow those of the size before.
static __global__ void __launch_bounds__(kResidualThreads) residual_kernel(ResidualArgs a) {
  __shared__ ResidualStorage storage;
  const std::uint32_t b = blockIdx.x;
  if (b < a.tile_begin[1])
    AgentResidual<2>(storage, a).run(b);
  else if (b < a.tile_begin[2])
    AgentResidual<3>(storage, a).run(b - a.tile_begin[1]);
  else if (b < a.tile_begin[3])
    AgentResidual<4>(storage, a).run(b - a.tile_begin[2]);
  else
    AgentResidual<5>(storage, a).run(b - a.tile_begin[3]);
}

}  // namespace sigpu::hevc::cuda
