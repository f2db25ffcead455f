// A pack's files from where they landed to where the decode reads them (decode_batch). Pinned
// files that follow each other in host memory go up in one copy per run into a landing buffer,
// where they lie at any byte offset; the kernels read whole words from a file's start, so each
// file is then moved to its aligned place in the pack and the gaps between files are zeroed.
// One DMA per file cost more than its bytes at clip sizes (a few hundred KB).
#pragma once

#include <cstdint>

#include "flac/cuda/decode_types.cuh"

namespace sigpu::flac::cuda {

/// Bytes the landing buffer needs past its last file: the kernel reads whole aligned words.
inline constexpr std::uint64_t kLandingSlack = 32;

/// Moves `count` files (moves[f]) from landing (16-byte aligned, kLandingSlack bytes readable
/// past the last file) into pack; any grid, blockDim.x a multiple of 32. Each thread writes 16
/// bytes at a time, built from aligned 4-byte loads shifted into place.
__global__ void SpreadFilesKernel(const std::uint8_t* __restrict__ landing,
                                  std::uint8_t* __restrict__ pack, const FileMove* moves,
                                  std::uint32_t count) {
  for (std::uint32_t f = blockIdx.x; f < count; f += gridDim.x) {
    const FileMove m = moves[f];
    const auto* words = reinterpret_cast<const std::uint32_t*>(landing);
    auto* dst = reinterpret_cast<uint4*>(pack + m.to);
    const unsigned shift = static_cast<unsigned>(m.from & 3u) * 8u;
    for (std::uint64_t q = threadIdx.x; q < (m.end - m.to) / 16; q += blockDim.x) {
      const std::uint64_t at = 16 * q;  // this store's first byte, from the file's start
      std::uint32_t out[4] = {0, 0, 0, 0};
      if (at < m.size) {
        const std::uint64_t first = (m.from + at) / 4;
        std::uint32_t w[5];
#pragma unroll
        for (int i = 0; i < 5; ++i) w[i] = words[first + i];
#pragma unroll
        for (int i = 0; i < 4; ++i) out[i] = __funnelshift_r(w[i], w[i + 1], shift);
        if (at + 16 > m.size) {  // the file ends in this store: zero what follows
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const std::uint64_t from = at + 4 * static_cast<std::uint64_t>(i);
            const std::uint64_t keep = from >= m.size ? 0 : m.size - from;
            if (keep < 4) out[i] &= (1u << (8 * keep)) - 1u;
          }
        }
      }
      dst[q] = make_uint4(out[0], out[1], out[2], out[3]);
    }
  }
}

}  // namespace sigpu::flac::cuda
