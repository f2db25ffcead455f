// Rate matching on the GPU (36.212 5.1.4.1), one thread block per code block, with the index
// math of turbo/rate_match_index.hpp (the CPU's): the receive side adds a transmission's E soft
// bits into the HARQ soft buffer and turns the soft buffer into the decoder's d0 | d1 | d2 LLRs;
// the transmit side selects the E bits of a transmission from the codeword.
//
// A transmission sends the valid (not dummy, not filler) positions of the circular buffer from
// k0 on, wrapping at N_cb, until E bits are out. So the bit at valid position j goes out as bits
// q, q + N_v, q + 2 N_v, ... of the transmission, q being the number of valid positions from k0
// up to j (circularly) and N_v that of the whole buffer: a count that a block-wide scan gives
// every position at once. Each position's LLRs then add up in the order of the transmission,
// as on the CPU, so the sums (float, and saturating int8 / int16) are the CPU's bit for bit.
//
// Only __syncthreads and shared memory: the kernels' bodies (the __device__ functions here; the
// __global__ kernels that call them are in rate_match.cu) also run on the CPU under
// tests/support/cuda_emulation.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/rate_match_index.hpp"

namespace sigpu::turbo::cuda {

inline constexpr int kRateMatchThreads = 256;

/// One code block of a transmission as the rate matching kernels see it.
struct RateMatchBlock {
  std::int32_t K = 0, F = 0, E = 0, N_cb = 0;
  std::uint32_t e_offset = 0;     ///< its first bit (soft bit) in the transmission
  std::uint32_t soft_offset = 0;  ///< its first soft buffer entry
  std::uint32_t d_offset = 0;     ///< its first bit (LLR) of d0 | d1 | d2, 3 (K + 4) of them
};

/// The descriptors of a transmission's code blocks (plan_transport_block()), laid out as the
/// transport block API lays them out: bits, soft buffers and d0 | d1 | d2 one block after another.
inline std::vector<RateMatchBlock> rate_match_blocks(std::span<const CodeBlockPlan> cbs) {
  std::vector<RateMatchBlock> out;
  std::uint32_t e = 0, soft = 0, d = 0;
  for (const auto& cb : cbs) {
    out.push_back({cb.K, cb.F, cb.E, cb.N_cb, e, soft, d});
    e += static_cast<std::uint32_t>(cb.E);
    soft += static_cast<std::uint32_t>(cb.N_cb);
    d += static_cast<std::uint32_t>(llr_count(cb.K));
  }
  return out;
}

/// Calls op(j, source, q, n_valid) for every valid position j of the circular buffer b: its bit
/// of d0 | d1 | d2 goes out as bits q, q + n_valid, ... (< E) of the transmission. Every thread
/// of the block calls it (thread t takes a contiguous chunk of positions); s_count: blockDim.x +
/// 2 ints of shared memory.
template <class Op>
__device__ void for_each_sent_position(const CircularBuffer& b, int* s_count, const Op& op) {
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  const int chunk = (b.N_cb + T - 1) / T;
  const int lo = t * chunk < b.N_cb ? t * chunk : b.N_cb;
  const int hi = lo + chunk < b.N_cb ? lo + chunk : b.N_cb;
  int valid = 0;
  for (int j = lo; j < hi; ++j) valid += circular_buffer_source(b, j) != kNullBit;
  s_count[t] = valid;
  __syncthreads();
  if (t == 0) {  // an exclusive scan of blockDim.x counts: short next to the chunks' work
    int sum = 0;
    for (int x = 0; x < T; ++x) {
      const int c = s_count[x];
      s_count[x] = sum;
      sum += c;
    }
    const int k0 = b.k0 % b.N_cb, c0 = k0 / chunk;
    int before_k0 = s_count[c0];
    for (int j = c0 * chunk; j < k0; ++j) before_k0 += circular_buffer_source(b, j) != kNullBit;
    s_count[T] = sum;
    s_count[T + 1] = before_k0;
  }
  __syncthreads();
  const int n_valid = s_count[T], before_k0 = s_count[T + 1];
  int rank = s_count[t];
  for (int j = lo; j < hi; ++j) {
    const std::int32_t source = circular_buffer_source(b, j);
    if (source == kNullBit) continue;
    const int q = rank >= before_k0 ? rank - before_k0 : rank - before_k0 + n_valid;
    ++rank;
    op(j, source, q, n_valid);
  }
  __syncthreads();  // s_count is free for the next call
}

/// Receive side, code block blockIdx.x (the body of DeRateMatchKernel): adds its E soft bits of
/// the transmission (llr) into its soft buffer (soft, N_cb entries), each position's in
/// transmission order; int8 and int16 sums saturate.
template <typename T>
__device__ inline void de_rate_match_body(const RateMatchBlock* __restrict__ blocks, int rv,
                                          const T* __restrict__ llr, T* soft) {
  __shared__ int s_count[kRateMatchThreads + 2];
  const RateMatchBlock d = blocks[blockIdx.x];
  const CircularBuffer b = make_circular_buffer(d.K, d.F, d.N_cb, rv);
  const T* in = llr + d.e_offset;
  T* buf = soft + d.soft_offset;
  for_each_sent_position(b, s_count, [&](int j, std::int32_t, int q, int n_valid) {
    T v = buf[j];
    for (int k = q; k < d.E; k += n_valid) v = saturating_add(v, in[k]);
    buf[j] = v;
  });
}

/// Transmit side, code block blockIdx.x (the body of RateMatchKernel): its E bits of the
/// transmission (e) from its codeword bits d0 | d1 | d2 (code).
__device__ inline void rate_match_body(const RateMatchBlock* __restrict__ blocks, int rv,
                                       const std::uint8_t* __restrict__ code, std::uint8_t* e) {
  __shared__ int s_count[kRateMatchThreads + 2];
  const RateMatchBlock d = blocks[blockIdx.x];
  const CircularBuffer b = make_circular_buffer(d.K, d.F, d.N_cb, rv);
  const std::uint8_t* cw = code + d.d_offset;
  std::uint8_t* out = e + d.e_offset;
  for_each_sent_position(b, s_count, [&](int, std::int32_t source, int q, int n_valid) {
    const std::uint8_t bit = cw[source] & 1u;
    for (int k = q; k < d.E; k += n_valid) out[k] = bit;
  });
}

/// The decoder's LLRs d0 | d1 | d2 of code block blockIdx.y (3 (K + 4) of them from d_offset)
/// from its soft buffer, one thread per LLR, gridDim.x blocks covering the largest code block
/// (the body of SoftBufferToLlrsKernel). Bits the soft buffer does not hold read 0, the filler
/// bits filler_llr.
template <typename T>
__device__ inline void soft_buffer_to_llrs_body(const RateMatchBlock* __restrict__ blocks,
                                                const T* __restrict__ soft, T* llr, T filler_llr) {
  const RateMatchBlock d = blocks[blockIdx.y];
  const int D = d.K + 4, x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (x >= 3 * D) return;
  const CircularBuffer b = make_circular_buffer(d.K, d.F, d.N_cb, 0);
  const int j = circular_buffer_position(b, x / D, x % D);
  llr[d.d_offset + x] = j == kNullBit ? filler_llr : (j < b.N_cb ? soft[d.soft_offset + j] : T(0));
}

}  // namespace sigpu::turbo::cuda
