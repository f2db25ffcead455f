// The bulk of a subframe read by the 32 threads of a warp (the Bulk of parse_subframe): every
// lane runs the frame's header and subframe-header parsing with the same reader (uniform
// control flow, broadcast loads), and the warp splits what is long among its lanes:
//   VERBATIM samples and escaped partitions: fixed-width values, one lane per value;
//   Rice partitions: segments of kRiceSegmentBits bits per lane (flac/rice_segment.hpp).
// Any error, and any code the segment walk does not follow, returns a non-ok FrameError: the
// kernel then decodes the frame again serially (the plain reader), which names the error, so
// the warp path never has to reproduce the plain path's error handling, only its good output.
#pragma once

#include <cstdint>

#include "core/bit_reader.hpp"
#include "flac/errors.hpp"
#include "flac/rice_segment.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac::cuda {

inline constexpr unsigned kFullWarp = 0xFFFFFFFFu;

/// A reader moved to an absolute bit position.
__device__ inline BitReader reader_at(const BitWindow& w, std::uint64_t bit) {
  BitReader br(w.data, w.size, static_cast<std::size_t>(bit >> 3));
  br.skip(bit & 7);
  return br;
}

/// Decodes `count` Rice codes with parameter k starting at bit `pos` into out[0 .. count);
/// returns where the last one ends, or kRiceUnfollowed when the warp cannot (see above).
template <typename S>
__device__ std::uint64_t warp_rice_partition(const BitWindow& w, unsigned k, std::uint64_t pos,
                                             unsigned count, S* out) {
  const unsigned lane = threadIdx.x & 31;
  unsigned done = 0;
  for (;;) {
    const unsigned active = rice_active_segments(count - done, k);
    const std::uint64_t start = pos + std::uint64_t(lane) * kRiceSegmentBits;
    std::uint64_t entry = start;  // lane 0's entry is exact; the others are guesses
    RiceSegment seg;
    if (lane < active) seg = walk_rice_segment(w, k, start, entry, RiceSegment{});
    for (;;) {
      const std::uint64_t before = __shfl_up_sync(kFullWarp, seg.exit, 1);
      const bool moved = lane > 0 && lane < active && before != entry;
      if (!__any_sync(kFullWarp, moved)) break;
      if (moved) {
        entry = before;
        seg = walk_rice_segment(w, k, start, entry, seg);
      }
    }
    const unsigned n = __popcll(seg.starts);
    unsigned below = n;  // inclusive prefix sum of the counts
    for (unsigned d = 1; d < 32; d <<= 1) {
      const unsigned v = __shfl_up_sync(kFullWarp, below, d);
      if (lane >= d) below += v;
    }
    const unsigned total = __shfl_sync(kFullWarp, below, 31);
    std::uint64_t last_end = kRiceUnfollowed;
    const bool ok =
        decode_rice_segment(w, k, start, seg.starts, done + below - n, count, out, &last_end);
    if (!__all_sync(kFullWarp, ok)) return kRiceUnfollowed;
    if (done + total >= count) {
      const unsigned holder = __ffs(__ballot_sync(kFullWarp, last_end != kRiceUnfollowed)) - 1;
      return __shfl_sync(kFullWarp, last_end, holder & 31);
    }
    done += total;
    pos = __shfl_sync(kFullWarp, seg.exit, active - 1);
    if (pos == kRiceUnfollowed) return kRiceUnfollowed;
  }
}

/// Fixed-width values: value i at pos + i * bits, one lane per value.
template <typename S>
__device__ SIGPU_FORCEINLINE void warp_fixed_width(const BitWindow& w, std::uint64_t pos,
                                                   unsigned bits, unsigned count, S* out) {
  for (unsigned i = threadIdx.x & 31; i < count; i += 32)
    out[i] = w.signed_at(pos + std::uint64_t(i) * bits, bits);
}

/// The Bulk of parse_subframe for a warp; all 32 lanes call it together with equal readers.
struct WarpBulk {
  BitWindow w;

  template <typename S>
  __device__ void warmup(BitReader& br, S* out, unsigned n, unsigned bits) const {
    read_samples(br, out, n, bits);
  }

  template <typename S>
  __device__ FrameError verbatim(BitReader& br, S* out, unsigned n, unsigned bits) const {
    if (bits > 32) return FrameError::truncated;  // 33-bit side channels: the serial path
    const std::uint64_t pos = br.bit_position();
    warp_fixed_width(w, pos, bits, n, out);
    return moved_to(br, pos + std::uint64_t(n) * bits);
  }

  template <typename S>
  __device__ FrameError residual(BitReader& br, S* out, unsigned n, unsigned order) const {
    ResidualLayout l;
    const FrameError le = read_residual_layout(br, n, order, l);
    if (le != FrameError::ok) return le;
    unsigned i = order;
    for (unsigned p = 0; p < l.partitions; ++p) {
      const unsigned end = (p + 1) * l.partition_size;
      const unsigned k = br.read(l.param_bits);
      std::uint64_t after;
      if (k == l.escape) {
        const unsigned bits = br.read(5);
        const std::uint64_t pos = br.bit_position();
        warp_fixed_width(w, pos, bits, end - i, out + i);
        after = pos + std::uint64_t(end - i) * bits;
      } else {
        after = end > i ? warp_rice_partition(w, k, br.bit_position(), end - i, out + i)
                        : br.bit_position();
        if (after == kRiceUnfollowed) return FrameError::rice_overflow;
      }
      const FrameError e = moved_to(br, after);
      if (e != FrameError::ok) return e;
      i = end;
    }
    return FrameError::ok;
  }

 private:
  __device__ FrameError moved_to(BitReader& br, std::uint64_t bit) const {
    if (bit > std::uint64_t(w.size) * 8) return FrameError::truncated;
    br = reader_at(w, bit);
    return FrameError::ok;
  }
};

}  // namespace sigpu::flac::cuda
