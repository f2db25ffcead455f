// FLAC kernels: thin wrappers over the logic shared with the CPU (frame_search.hpp,
// frame.hpp). One thread per byte window, per candidate or per frame (a warp per candidate for
// the links, warp_link.cuh); the CRC tables are copied into shared memory because threads index
// them divergently.
#pragma once

#include <cstdint>

#include "core/crc.hpp"
#include "flac/cuda/decode_types.cuh"
#include "flac/cuda/warp_link.cuh"
#include "flac/frame.hpp"
#include "flac/frame_index.hpp"
#include "flac/frame_search.hpp"
#include "flac/pcm_store.hpp"

namespace sigpu::flac::cuda {

/// Bytes per thread of FindHeadersKernel: one 16-byte load.
inline constexpr unsigned kBytesPerThread = 16;

__device__ inline void load_crc_tables(CrcTables& s, const CrcTables* g) {
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) {
    s.crc8[i] = g->crc8[i];
    s.crc16[i] = g->crc16[i];
  }
  __syncthreads();
}

/// Threads FindHeadersKernel needs for bytes [from, size) of d: one per 16-byte-aligned block of
/// addresses that holds any of them.
inline std::size_t find_headers_threads(const std::uint8_t* d, std::size_t size, std::size_t from) {
  if (from >= size) return 0;
  const auto first = reinterpret_cast<std::uintptr_t>(d + from) / kBytesPerThread;
  const auto last = (reinterpret_cast<std::uintptr_t>(d + size) - 1) / kBytesPerThread;
  return last - first + 1;
}

/// Positions of every byte of [from, size) that starts a header with a valid CRC-8, in no
/// particular order. Each thread loads one 16-byte-aligned block whole (byte loads made the
/// kernel a quarter of the hour's search: 0.46 ms on the H100) and looks closer only at its
/// 0xFF bytes; blocks at the ends of the span read only their bytes inside it.
__global__ void FindHeadersKernel(const std::uint8_t* d, std::size_t size, std::size_t from,
                                  const CrcTables* tables, std::uint64_t* positions,
                                  std::uint32_t* count, std::uint32_t capacity) {
  __shared__ CrcTables t;
  load_crc_tables(t, tables);
  const auto lo = reinterpret_cast<std::uintptr_t>(d + from);
  const auto hi = reinterpret_cast<std::uintptr_t>(d + size);
  const std::uintptr_t block =
      lo / kBytesPerThread * kBytesPerThread +
      (std::uintptr_t(blockIdx.x) * blockDim.x + threadIdx.x) * kBytesPerThread;
  if (block >= hi) return;
  std::uint32_t w[4];
  if (block >= lo && block + kBytesPerThread <= hi) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(block));
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else {
    for (unsigned i = 0; i < 4; ++i) {
      w[i] = 0;
      for (unsigned b = 0; b < 4; ++b) {
        const std::uintptr_t a = block + 4 * i + b;
        if (a >= lo && a < hi)
          w[i] |= std::uint32_t{*reinterpret_cast<const std::uint8_t*>(a)} << (8 * b);
      }
    }
  }
  for (unsigned i = 0; i < 4; ++i) {
    // 0xFF in each byte that is 0xFF (bytes outside the span were read as 0).
    for (std::uint32_t ff = __vcmpeq4(w[i], 0xFFFFFFFFu); ff;) {
      const unsigned b = static_cast<unsigned>(__ffs(static_cast<int>(ff)) - 1) / 8;
      ff &= ~(0xFFu << (8 * b));
      const std::size_t p = block + 4 * i + b - reinterpret_cast<std::uintptr_t>(d);
      Candidate c;
      if (!header_candidate(d, size, p, t.crc8, c)) continue;
      const std::uint32_t k = atomicAdd(count, 1u);
      if (k < capacity) positions[k] = p;
    }
  }
}

/// Candidates from sorted positions.
__global__ void BuildCandidatesKernel(const std::uint8_t* d, std::size_t size,
                                      const CrcTables* tables, const std::uint64_t* positions,
                                      std::uint32_t count, Candidate* cands) {
  __shared__ CrcTables t;
  load_crc_tables(t, tables);
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) header_candidate(d, size, positions[i], t.crc8, cands[i]);
}

/// Lists the frames of the n candidates when they are one unbroken chain of one block size
/// (chain_entry, frame i at candidate i, its first sample i block sizes in): the decode of such
/// a stream starts on the device right after the search, without the candidates' trip to the
/// host (Executor::start_chained). *broken, zero at launch, becomes nonzero at any break, and
/// for a stream of variable block sizes (their first samples would need a scan).
__global__ void ChainFramesKernel(const Candidate* cands, std::uint32_t n, ChainInfo info,
                                  FrameEntry* frames, std::uint32_t* broken) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (cands[0].variable ||
      !chain_entry(cands, n, i, info, std::uint64_t(i) * cands[0].block_size, frames + i))
    *broken = 1;
}

/// Threads of LinkSuccessorsKernel's blocks; its warps take the candidates in turn.
inline constexpr unsigned kLinkBlock = 256;

/// Links every candidate to its successor (warp_find_successor), a warp per candidate. The
/// warps take the next candidate from *taken (zero at launch) as they finish one: the kernel
/// runs beside the parse of an unbroken stream (Executor::start_chained), where only some of
/// its blocks find room on an SM, and with the candidates dealt out by block the last blocks
/// to find room finished the links only when the parse did (the hour: 7.1 ms against 6.5).
__global__ void __launch_bounds__(kLinkBlock)
    LinkSuccessorsKernel(const std::uint8_t* d, const Crc16Words* words, Candidate* cands,
                         std::uint32_t count, unsigned stream_bps, std::uint32_t max_frame_size,
                         std::uint32_t* taken) {
  __shared__ Crc16Words t;
  // Copied as 32-bit words: the tables are 16-bit, and a thread per entry would take 7 rounds.
  static_assert(sizeof(Crc16Words) % 4 == 0);
  for (unsigned k = threadIdx.x; k < sizeof(Crc16Words) / 4; k += blockDim.x)
    reinterpret_cast<std::uint32_t*>(&t)[k] = reinterpret_cast<const std::uint32_t*>(words)[k];
  __syncthreads();
  for (;;) {
    std::uint32_t i = 0;
    if (threadIdx.x % 32 == 0) i = atomicAdd(taken, 1u);
    i = __shfl_sync(0xFFFFFFFFu, i, 0);
    if (i >= count) return;
    const std::int32_t next = warp_find_successor(
        d, cands, count, i, search_span(cands[i], stream_bps, max_frame_size), t);
    if (threadIdx.x % 32 == 0) cands[i].next = next;
  }
}

/// Marks frame_crc on every decoded frame whose CRC-16 over [pos, end) fails, a warp per frame
/// (warp_crc16): the check a decode of an index linked by numbers alone owes (Links::numbered).
/// The decode kernels already required each frame to end exactly at `end`.
__global__ void __launch_bounds__(kLinkBlock)
    CheckFrameCrcKernel(const std::uint8_t* d, const Crc16Words* words, const FrameEntry* frames,
                        std::uint32_t count, const FileSpanDevice* d_files,
                        FrameResultDevice* results) {
  __shared__ Crc16Words t;
  for (unsigned k = threadIdx.x; k < sizeof(Crc16Words) / 4; k += blockDim.x)
    reinterpret_cast<std::uint32_t*>(&t)[k] = reinterpret_cast<const std::uint32_t*>(words)[k];
  __syncthreads();
  const unsigned warps = blockDim.x / 32;
  for (std::uint32_t k = blockIdx.x * warps + threadIdx.x / 32; k < count; k += gridDim.x * warps) {
    if (results[k].error != static_cast<std::uint8_t>(FrameError::ok)) continue;
    const FrameEntry f = frames[k];
    const std::uint8_t* file = d_files ? d + d_files[k].offset : d;
    if (warp_crc16(file, f.pos, f.end, t) != 0 && threadIdx.x % 32 == 0)
      results[k].error = static_cast<std::uint8_t>(FrameError::frame_crc);
  }
}

/// The CRC-16 table in shared memory (threads index it divergently); ends in a barrier.
__device__ inline void load_crc16_table(std::uint16_t* s, const CrcTables* g) {
  for (unsigned i = threadIdx.x; i < 256; i += blockDim.x) s[i] = g->crc16[i];
  __syncthreads();
}

/// The header of an indexed frame, parsed again; the search has checked its CRC-8.
__device__ inline FrameError reparse_header(const std::uint8_t* d, std::size_t size,
                                            const FrameEntry& f, FrameHeader& h) {
  const std::size_t avail = size - f.pos < kMaxHeaderBytes ? size - f.pos : kMaxHeaderBytes;
  return parse_frame_header(d + f.pos, avail, h, nullptr);
}

/// A frame's scratch, seen as samples of S: its samples' place in the stream, at scratch_bytes
/// per sample.
template <typename S>
__device__ SIGPU_FORCEINLINE S* frame_scratch(const void* scratch, unsigned scratch_bytes,
                                              std::uint64_t out_sample, unsigned channels) {
  const std::size_t base = std::size_t(out_sample) * channels;
  return reinterpret_cast<S*>(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(scratch)) +
                              base * scratch_bytes);
}

/// The bytes of frame k's file: the whole buffer, or its file's span of a packed buffer.
__device__ SIGPU_FORCEINLINE void frame_file(const FileSpanDevice* files, std::uint32_t k,
                                             const std::uint8_t*& d, std::size_t& size) {
  if (!files) return;
  const FileSpanDevice f = files[k];
  d += f.offset;
  size = f.size;
}

/// Decodes every frame of the index into the output. scratch has room for every sample of the
/// stream at `scratch_bytes` (4, or 8 for 32-bit audio) bytes each; results[k] gets the error
/// and where the frame really ends. `files` is null, or frame k's file in a packed buffer.
__global__ void DecodeFramesKernel(const std::uint8_t* d, std::size_t size, const CrcTables* tables,
                                   const FrameEntry* frames, std::uint32_t count, unsigned bps,
                                   unsigned channels, void* scratch, unsigned scratch_bytes,
                                   PcmTarget target, FrameResultDevice* results,
                                   const FileSpanDevice* files) {
  __shared__ std::uint16_t crc16[256];
  load_crc16_table(crc16, tables);
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= count) return;
  frame_file(files, k, d, size);
  const FrameEntry f = frames[k];
  FrameHeader h;
  FrameError e = reparse_header(d, size, f, h);
  std::size_t end = 0;
  if (e == FrameError::ok) {
    auto sink = [&](unsigned i, unsigned c, std::int32_t v) {
      store_sample(target, f.out_sample + i, c, v);
    };
    if (scratch_bytes == 8 && needs_wide_scratch(h, bps)) {
      auto* x = static_cast<std::int64_t*>(scratch) + std::size_t(f.out_sample) * channels;
      e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end);
      if (e == FrameError::ok) store_frame(h, x, sink);
    } else {
      std::int32_t* x = frame_scratch<std::int32_t>(scratch, scratch_bytes, f.out_sample, channels);
      e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end);
      if (e == FrameError::ok) store_frame(h, x, sink);
    }
  }
  results[k] = {end, static_cast<std::uint8_t>(e)};
}

/// Blocks of StoreFramesKernel and FillFailedFramesKernel, each taking every gridDim.x-th frame:
/// nearly every frame has nothing left to do there (RestoreSubframesKernel stored it; it did
/// not fail), and a block per frame took 29 us of the hour on the H100 for each kernel.
inline unsigned frame_blocks(std::uint32_t frames) {
  return frames < 1024 ? frames : 1024;
}

/// Fills the span of every frame that failed with `fill` (0: silence; tests poison it, see
/// set_output_fill): a block per frame (frame_blocks), and counts them in *failures (zero at
/// launch), so that the host looks through the results only when some failed. The decode
/// kernels write a frame's output only once it has decoded whole, and the output is not cleared
/// beforehand (only the spans no frame covers are, uncovered_samples).
__global__ void FillFailedFramesKernel(std::uint32_t count, const FrameEntry* frames,
                                       const FrameResultDevice* results, PcmTarget target,
                                       std::uint8_t fill, std::uint32_t* failures) {
  for (std::uint32_t k = blockIdx.x; k < count; k += gridDim.x) {
    if (results[k].error == static_cast<std::uint8_t>(FrameError::ok)) continue;
    if (threadIdx.x == 0) atomicAdd(failures, 1u);
    const FrameEntry f = frames[k];
    const std::uint64_t first = f.out_sample < target.samples ? f.out_sample : target.samples;
    const std::uint64_t end =
        f.out_sample + f.block_size < target.samples ? f.out_sample + f.block_size : target.samples;
    const std::uint64_t value_bytes = pcm_value_bytes(target.format);
    const bool planar = target.layout == Layout::planar;
    // Interleaved, the frame's bytes are one run; planar, one run per channel.
    const std::uint64_t run = (end - first) * value_bytes * (planar ? 1 : target.channels);
    auto* out = static_cast<std::uint8_t*>(target.data);
    for (unsigned c = 0; c < (planar ? target.channels : 1u); ++c) {
      std::uint8_t* at = out + pcm_offset(target, first, c) * value_bytes;
      for (std::uint64_t j = threadIdx.x; j < run; j += blockDim.x) at[j] = fill;
    }
  }
}

}  // namespace sigpu::flac::cuda
