// Turbo decoder kernels: thin wrappers over decode_subblock (turbo/map_decoder.hpp), the same
// code the CPU runs. One thread per sub-decoder, its 8 state metrics in registers.
//
// Why one thread per sub-decoder rather than 8 (one per state): with 8 threads each trellis
// step needs an exchange of the 8 metrics (shuffles) and a 2-way max per thread, about as many
// instructions as one thread doing all 8 states, plus the shuffle latency on the serial chain.
// The parallelism we need comes from P x blocks (P up to K), not from the states, and one
// thread per sub-decoder keeps the arithmetic - and so the results - identical to the CPU's.
#pragma once

#include <cstdint>

#include "turbo/map_decoder.hpp"

namespace sigpu::turbo::cuda {

inline constexpr int kThreadsPerBlock = 128;

/// Loads that bypass L1 (cache at L2, coherent across SMs): loose mode reads values other
/// thread blocks write during the same launch.
struct CoherentLoad {
  template <typename T>
  __device__ static __forceinline__ T ld(const T* p) {
    return *static_cast<const volatile T*>(p);
  }
};

/// Strict mode: one half-iteration of every sub-decoder of the batch.
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock)
    HalfIterationKernel(HalfIteration<Tr> h, int nblocks, std::uint32_t total_subs,
                        typename Tr::Metric* scratch) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total_subs) return;
  const int b = find_block(h.blocks, nblocks, t);
  const BlockDesc d = h.blocks[b];
  const int i = static_cast<int>(t - d.sub_offset);
  typename Tr::Metric* alpha =
      scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(d.K, d.P, i)) * 8;
  decode_subblock<Tr, false>(h, d, i, alpha);
}

/// Loose mode: every iteration in one launch. A sub-decoder never waits for another; it reads
/// the extrinsics and boundary metrics its neighbours have published so far (L2-coherent loads,
/// fenced stores), in whatever iteration they are.
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock)
    LooseKernel(HalfIteration<Tr> h, const typename Tr::Llr* ext1, const typename Tr::Llr* ext2,
                int nblocks, std::uint32_t total_subs, typename Tr::Metric* scratch, int iterations,
                std::uint8_t* bits) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total_subs) return;
  const int b = find_block(h.blocks, nblocks, t);
  const BlockDesc d = h.blocks[b];
  const int i = static_cast<int>(t - d.sub_offset);
  typename Tr::Metric* alpha =
      scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(d.K, d.P, i)) * 8;
  for (int it = 0; it < iterations; ++it) {
    for (int c = 0; c < 2; ++c) {
      HalfIteration<Tr> hc = h;
      hc.component = c;
      hc.read_buf = hc.write_buf = 0;
      hc.ext_in = c == 0 ? ext2 : ext1;
      hc.ext_out = const_cast<typename Tr::Llr*>(c == 0 ? ext1 : ext2);
      hc.bits = (it == iterations - 1 && c == 1) ? bits : nullptr;
      decode_subblock<Tr, false, CoherentLoad>(hc, d, i, alpha);
      __threadfence();
    }
  }
}

}  // namespace sigpu::turbo::cuda
