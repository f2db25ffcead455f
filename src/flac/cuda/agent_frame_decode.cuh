// The fast frame decode, in three kernels over the same scratch as DecodeFramesKernel (its
// plain twin, kernels.cuh):
//   ParseFramesKernel    one thread per frame (or, DecodePath::fast_warp_parse, one warp
//                        sharing the residuals, warp_residual.cuh): headers, warm-up samples,
//                        Rice residuals, and the predictor of every subframe into a
//                        SubframeParams; DecodePath::fast_flat reads the residuals with the
//                        flat loop of flac/residual_flat.hpp;
//   RestoreSubframesKernel  a warp per 32 (frame, channel) subframes, each lane restoring one
//                        (FIXED/LPC, warp_restore.cuh); the frames a warp holds whole go
//                        from its tiles to the output, decorrelated and converted;
//   StoreFramesKernel    a block per frame left (64-bit sums, 3, 5, 6 or 7 channels):
//                        decorrelation and format conversion, threads striding over the output
//                        so that writes coalesce.
// Frames that need 64-bit scratch (32-bit audio with a side channel) are decoded and stored
// whole by the parse kernel, exactly as the plain kernel does.
#pragma once

#include <cstdint>
#include <type_traits>

#include "flac/cuda/decode_path.hpp"
#include "flac/cuda/kernels.cuh"
#include "flac/cuda/warp_residual.cuh"
#include "flac/cuda/warp_restore.cuh"
#include "flac/frame.hpp"
#include "flac/residual_flat.hpp"

namespace sigpu::flac::cuda {

/// Parses every frame (kPath: fast, fast_flat or fast_warp_parse), unless `skip` is set and
/// *skip nonzero (then every frame is left as not pending, its result ok), with kLanes threads per
/// frame: 32, a warp sharing the subframes' bulk (WarpBulk; all lanes parse the headers
/// together), or 1, a thread walking the whole frame (SerialBulk, or FlatBulk for fast_flat).
/// A frame the warp cannot finish (damage, a code the segment walk does not follow) is decoded
/// again by lane 0 with the serial reader, exactly as the plain kernel does, so errors and ends
/// come from one place. Frames needing 64-bit scratch are decoded and stored whole by lane 0.
///
/// With a narrow scratch (scratch_bytes 2, fast_flat only, see parse_narrow) the values that do
/// not fit 16 bits go to `narrow`'s pool; a frame that RestoreSubframesKernel could not then
/// restore and store from its tiles (a full pool, 64-bit sums, another channel count than the
/// stream's) marks the decode refused.
template <DecodePath kPath, unsigned kLanes = kPath == DecodePath::fast_warp_parse ? 32 : 1>
__global__ void ParseFramesKernel(const std::uint8_t* d, std::size_t size, const CrcTables* tables,
                                  const FrameEntry* frames, std::uint32_t count, unsigned bps,
                                  unsigned channels, void* scratch, unsigned scratch_bytes,
                                  PcmTarget target, FrameResultDevice* results,
                                  FrameStateDevice* states, SubframeParams* params,
                                  const FileSpanDevice* files, const std::uint32_t* skip,
                                  NarrowPool narrow) {
  static_assert(kPath != DecodePath::plain);
  // The CRC-16 table is read only for a frame that ends off its span (damage): from global
  // memory, so that the blocks of the flat parse leave room on each SM for a block of the links
  // (LinkSuccessorsKernel) beside their ten.
  const std::uint16_t* crc16 = tables->crc16;
  // The flat parse's word rings (FlatBits) and output staging (FlatOut), launched with blocks of
  // kFlatRingLanes threads.
  constexpr bool kFlat = kPath == DecodePath::fast_flat;
  __shared__ __align__(16) std::uint32_t rings[kFlat ? kFlatRingWords * kFlatRingLanes : 1];
  __shared__ __align__(16) std::uint8_t stages[kFlat ? kFlatStageBytes * kFlatRingLanes : 1];
  const std::uint32_t k = (blockIdx.x * blockDim.x + threadIdx.x) / kLanes;  // warp-uniform
  if (k >= count) return;
  const bool leader = threadIdx.x % kLanes == 0;
  if (skip && *skip) {  // nothing to decode (ChainFramesKernel found no chain): nothing pending
    if (leader) {
      states[k] = {};
      results[k] = {};
    }
    return;
  }
  frame_file(files, k, d, size);
  const FrameEntry f = frames[k];
  FrameHeader h;
  FrameError e = reparse_header(d, size, f, h);
  std::size_t end = 0;
  FrameStateDevice st{f.out_sample, 0, 0, 0, 0, kNoException};
  if (e == FrameError::ok) {
    st.block_size = h.block_size;
    st.assignment = h.assignment;
    st.channels = static_cast<std::uint8_t>(h.channels);
    SubframeParams* p = params + std::size_t(k) * kMaxChannels;
    if (scratch_bytes == 8 && needs_wide_scratch(h, bps)) {
      if (leader) {
        auto* x = static_cast<std::int64_t*>(scratch) + std::size_t(f.out_sample) * channels;
        e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end);
        auto sink = [&](unsigned i, unsigned c, std::int32_t v) {
          store_sample(target, f.out_sample + i, c, v);
        };
        if (e == FrameError::ok) store_frame(h, x, sink);
      }
    } else if (scratch_bytes == 2) {
      if constexpr (kFlat) {
        std::int16_t* x = frame_scratch<std::int16_t>(scratch, 2, f.out_sample, channels);
        NarrowSpill spill{narrow.entries, narrow.counters, narrow.capacity, x};
        e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end, p,
                         FlatBulk{d, size, rings + threadIdx.x % kFlatRingLanes * kFlatChunkWords,
                                  stages + threadIdx.x % kFlatRingLanes * kFlatStageBytes, &spill});
        bool refused = spill.refused || h.channels != channels;
        for (unsigned c = 0; c < h.channels; ++c)
          refused |= p[c].kind == SubframeParams::lpc &&
                     !lpc_fits_32(p[c].bits, p[c].precision, p[c].order);
        if (refused && e == FrameError::ok) narrow.counters[1] = 1;
        st.pending = e == FrameError::ok;
        st.exceptions = spill.head;
      }
    } else {
      std::int32_t* x = frame_scratch<std::int32_t>(scratch, scratch_bytes, f.out_sample, channels);
      if constexpr (kLanes == 32) {
        e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end, p,
                         WarpBulk{{d, size}});
        if (e != FrameError::ok && leader)
          e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end, p);
      } else if constexpr (kPath == DecodePath::fast_flat) {
        e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end, p,
                         FlatBulk{d, size, rings + threadIdx.x % kFlatRingLanes * kFlatChunkWords,
                                  stages + threadIdx.x % kFlatRingLanes * kFlatStageBytes});
      } else {
        e = decode_frame(d, size, {f.pos, f.end}, h, bps, x, crc16, false, &end, p);
      }
      st.pending = e == FrameError::ok;
    }
  }
  if (!leader) return;
  states[k] = st;
  results[k] = {end, static_cast<std::uint8_t>(e)};
}

/// Threads of RestoreSubframesKernel's blocks: one warp per 32 subframes.
inline constexpr unsigned kRestoreBlock = 128;
/// The blocks of it an SM must hold at once: the hour's 84,362 subframes make 660 blocks, one
/// wave on the H100's 132 SMs at 5 each (at most 102 registers).
inline constexpr unsigned kRestoreBlocksPerSm = 5;

/// Whether RestoreSubframesKernel can store frames of `channels` channels itself: a warp must
/// hold whole frames.
inline bool restore_stores_frames(unsigned channels, unsigned scratch_bytes) {
  return (scratch_bytes == 4 || scratch_bytes == 2) && 32 % channels == 0;
}

/// Whether the fast path parses into a narrow scratch: 16-bit samples, half the bytes the parse
/// writes and the restore reads (the hour's restore read 1.38 GB of 32-bit residuals). For
/// audio of at most 16 bits whose frames the restore stores whole from its tiles; the values
/// that do not fit are listed beside it (NarrowSpill).
inline bool parse_narrow(DecodePath path, unsigned bps, unsigned channels) {
  return path == DecodePath::fast_flat && bps <= 16 && channels <= kMaxChannels &&
         restore_stores_frames(channels, 2);
}

/// Subframe t is channel t % channels of frame t / channels (warp_restore.cuh). With `store`
/// (restore_stores_frames), each frame whose subframes the warp restores whole is written to
/// `target` from the tiles and marked done (pending = 0), so that it skips the scratch and
/// StoreFramesKernel; the rest (64-bit sums, a frame with other channels than the stream's)
/// is restored in place for StoreFramesKernel. S: the scratch's samples (std::int16_t: narrow,
/// every frame stored, the values that do not fit taken from `exceptions`).
///
/// Launched twice over the same subframes (launch_restore): without kLongOrders a warp restores
/// its subframes when their orders are at most kRestoreShortOrders, with it when one is longer.
/// In one kernel, the 64 registers of the long orders' coefficients and history made the
/// common orders spill values that every tile reloaded, from L2 (the restore's L1 is mostly its
/// shared memory).
template <typename S, bool kLongOrders>
__global__ void __launch_bounds__(kRestoreBlock, kRestoreBlocksPerSm)
    RestoreSubframesKernel(std::uint32_t count, unsigned channels, void* scratch,
                           unsigned scratch_bytes, FrameStateDevice* states,
                           const SubframeParams* params, PcmTarget target, bool store,
                           const NarrowException* exceptions) {
  __shared__ RestoreWarpSmem smem[kRestoreBlock / 32];
  __shared__ FrameStateDevice frame_of[kRestoreBlock];  // each lane's frame
  const std::uint64_t t = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint32_t k = static_cast<std::uint32_t>(t / channels);
  const unsigned c = static_cast<unsigned>(t % channels), lane = threadIdx.x % 32;
  if (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x / 32 * 32 >=
      std::uint64_t(count) * channels)
    return;  // the whole warp is past the end
  const bool mine = k < count && states[k].pending && c < states[k].channels;
  const FrameStateDevice st = mine ? states[k] : FrameStateDevice{};
  const SubframeParams* p = params + std::size_t(k) * kMaxChannels + c;
  S* x = mine ? frame_scratch<S>(scratch, scratch_bytes, st.out_sample, channels) +
                    std::size_t(c) * st.block_size
              : nullptr;
  RestoreLane<S> l = mine ? restore_lane(*p, x, st.block_size) : RestoreLane<S>{};
  l.spilled = mine ? st.exceptions : kNoException;
  l.first = c * st.block_size;
  const unsigned order = __reduce_max_sync(0xFFFFFFFFu, l.order);
  if ((order > kRestoreShortOrders) != kLongOrders) return;  // the other launch's warp
  // The frames this warp stores: every channel's lane restores through the tile.
  const std::uint32_t whole =
      __ballot_sync(0xFFFFFFFFu, store && mine && !l.alone && st.channels == channels);
  const std::uint32_t frame_lanes = channels == 32 ? ~0u : (1u << channels) - 1;
  std::uint32_t stored_lanes = 0;
  for (unsigned f = 0; store && f < 32 / channels; ++f)
    if ((whole >> (f * channels) & frame_lanes) == frame_lanes)
      stored_lanes |= frame_lanes << (f * channels);
  frame_of[threadIdx.x] = st;
  __syncwarp();
  const FrameStateDevice* frames = frame_of + threadIdx.x / 32 * 32;
  // Interleaved stereo, the common case: lanes 2f and 2f + 1 store the tile of the warp's frame
  // f, their own frame, whose state they hold in registers; the pairs leave in 16-byte stores
  // (kWords 32-bit words per pair: 1 for s16, 2 for 32-bit samples), the two lanes' side by
  // side, so that each store of the warp writes whole 32-byte sectors.
  // (Lanes striding over one frame at a time waited on that frame's state in shared memory
  // before every store: 2.5 ms for the hour's restore in s16 against 1.07 ms so.)
  auto store_pairs = [&](const std::int32_t* tile, unsigned done, auto words_per_pair,
                         auto to_words) {
    constexpr unsigned kWords = decltype(words_per_pair)::value, kPairs = 4 / kWords;
    // s16 from a narrow scratch (at most 16-bit audio) keeps the low 16 bits of each sample,
    // which 32-bit sums give exactly, whatever a hostile stream's values.
    using Sums = std::conditional_t<sizeof(S) == 2 && kWords == 1, std::int32_t, std::int64_t>;
    if (!(stored_lanes >> lane & 1) || st.block_size <= done) return;
    const unsigned valid = min(kRestoreTile, st.block_size - done);
    const std::int32_t* pair = tile + (lane & ~1u) * kRestorePitch;
    auto* out = static_cast<std::uint32_t*>(target.data) + (st.out_sample + done) * kWords;
    const bool aligned = valid == kRestoreTile && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
#pragma unroll
    for (unsigned m = 0; m < kRestoreTile / kPairs / 2; ++m) {
      const unsigned g = (2 * m + lane % 2) * kPairs;  // the pair's 16-byte runs side by side
      std::uint32_t w[4];
#pragma unroll
      for (unsigned j = 0; j < kPairs; ++j) {
        std::int32_t left, right;
        decorrelated_pair<Sums>(st.assignment, pair[g + j], pair[g + j + kRestorePitch], left,
                                right);
        to_words(left, right, w + j * kWords);
      }
      if (aligned) {
        store_global_16(out + g * kWords, w[0], w[1], w[2], w[3]);
      } else {
        for (unsigned j = 0; j < 4; ++j)
          if (g + j / kWords < valid) out[g * kWords + j] = w[j];
      }
    }
  };
  const unsigned bps = target.bits_per_sample;
  auto s16_words = [&](std::int32_t left, std::int32_t right, std::uint32_t* w) {
    w[0] = static_cast<std::uint16_t>(s16_sample(left, bps)) |
           std::uint32_t{static_cast<std::uint16_t>(s16_sample(right, bps))} << 16;
  };
  auto words32 = [&](std::int32_t left, std::int32_t right, std::uint32_t* w) {
    w[0] = pcm32_bits(target.format, left, bps);
    w[1] = pcm32_bits(target.format, right, bps);
  };
  const bool pairs = target.layout == Layout::interleaved && channels == 2;
  auto emit = [&](const RestoreWarpSmem& s, const std::int32_t* tile, unsigned done) {
    if constexpr (sizeof(S) == 4) {
      if (stored_lanes != ~0u) WriteBackTile{stored_lanes}(s, tile, done);
    }
    if (pairs && target.format == SampleFormat::s16)
      return store_pairs(tile, done, std::integral_constant<unsigned, 1>{}, s16_words);
    if (pairs) return store_pairs(tile, done, std::integral_constant<unsigned, 2>{}, words32);
    const unsigned i = done + lane;
    for (unsigned f = 0; f < 32 / channels; ++f) {
      const unsigned q = f * channels;
      if (!(stored_lanes >> q & 1)) continue;
      const FrameStateDevice& fr = frames[q];
      if (i >= fr.block_size) continue;
      for (unsigned cc = 0; cc < channels; ++cc)
        store_sample(
            target, fr.out_sample + i, cc,
            decorrelated_sample(fr.assignment, tile + q * kRestorePitch, kRestorePitch, lane, cc));
    }
  };
  warp_restore_any<kLongOrders>(order, l, smem[threadIdx.x / 32], exceptions, emit);
  if (c == 0 && (stored_lanes >> lane & 1)) states[k].pending = 0;
  // The index keeps every frame at the stream's channel count; this only guards that (a narrow
  // parse refuses such a frame).
  if constexpr (sizeof(S) == 4)
    for (unsigned cc = c + channels; mine && cc < st.channels; cc += channels)
      restore_subframe(p[cc - c],
                       frame_scratch<S>(scratch, scratch_bytes, st.out_sample, channels) +
                           std::size_t(cc) * st.block_size,
                       st.block_size);
}

/// A block per frame still pending (frame_blocks).
__global__ void StoreFramesKernel(std::uint32_t count, unsigned channels, const void* scratch,
                                  unsigned scratch_bytes, const FrameStateDevice* states,
                                  PcmTarget target) {
  for (std::uint32_t k = blockIdx.x; k < count; k += gridDim.x) {
    const FrameStateDevice st = states[k];
    if (!st.pending) continue;
    const std::int32_t* x =
        frame_scratch<std::int32_t>(scratch, scratch_bytes, st.out_sample, channels);
    const unsigned n = st.block_size, nc = st.channels, total = n * nc;
    if (target.layout == Layout::interleaved) {
      for (unsigned j = threadIdx.x; j < total; j += blockDim.x) {
        const unsigned i = j / nc, c = j - i * nc;
        store_sample(target, st.out_sample + i, c, decorrelated_sample(st.assignment, x, n, i, c));
      }
    } else {
      for (unsigned j = threadIdx.x; j < total; j += blockDim.x) {
        const unsigned c = j / n, i = j - c * n;
        store_sample(target, st.out_sample + i, c, decorrelated_sample(st.assignment, x, n, i, c));
      }
    }
  }
}

}  // namespace sigpu::flac::cuda
