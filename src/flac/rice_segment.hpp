// Rice codes decoded from anywhere in a partition, for decoders that split one partition over
// many threads (the GPU's warp decoder, flac/cuda/warp_residual.cuh). Shared by host and device
// so that the per-lane logic is tested on every machine (tests/flac/test_rice_segments.cpp).
//
// A Rice partition is a chain: where a code starts depends on every code before it. The warp
// cuts the bits after the partition's first code into segments of kRiceSegmentBits, one per
// lane. Every lane walks its segment from a guessed entry (its first bit), recording where
// codes start; then each lane takes the exit of the lane before it as its true entry and walks
// again, stopping as soon as it meets a start it had already found (from there on the two
// walks are the same chain). Rice codes resynchronise within a few codes, so one or two
// corrections settle the warp; at most one per lane is ever needed. The starts are then exact,
// their counts give every code's index, and every lane decodes its own codes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/bit_reader.hpp"
#include "core/hd.hpp"
#include "flac/residual.hpp"

namespace sigpu::flac {

/// Bits per lane segment: one 64-bit map of code starts.
inline constexpr unsigned kRiceSegmentBits = 64;
/// Quotients above this are not followed by the segment walk (the caller falls back to the
/// serial decoder, which handles any length): it bounds the work of lanes that start on a long
/// run of zero bits, inside or beyond the partition.
inline constexpr unsigned kRiceMaxWalkQuotient = 255;
/// The length of a code that the walk does not follow.
inline constexpr std::uint64_t kRiceUnfollowed = ~std::uint64_t{0} >> 2;

/// Random access to the bits of a buffer, MSB first; bits past the end read as zero. On the
/// device `data` must be 4-byte aligned.
struct BitWindow {
  const std::uint8_t* data;
  std::size_t size;

  /// The word at a 4-byte-aligned byte offset as it lies in memory, bytes past the end zero.
  /// Apart from big_endian() so that a reader can load a word well before it needs it: the
  /// byte swap is the load's first use, and the warp waits for the load there.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t raw_word(std::size_t byte) const {
    if (byte + 4 <= size) {
#ifdef __CUDA_ARCH__
      return __ldg(reinterpret_cast<const unsigned*>(data + byte));
#else
      static_assert(std::endian::native == std::endian::little);
      std::uint32_t w;
      std::memcpy(&w, data + byte, 4);
      return w;
#endif
    }
    std::uint32_t w = 0;
    for (std::size_t i = 0; i < 4; ++i)
      w |= std::uint32_t{byte + i < size ? data[byte + i] : 0u} << (8 * i);
    return w;
  }

  /// A raw_word in the bitstream's order.
  static SIGPU_HD SIGPU_FORCEINLINE std::uint32_t big_endian(std::uint32_t raw) {
#ifdef __CUDA_ARCH__
    return __byte_perm(raw, 0, 0x0123);
#else
    return __builtin_bswap32(raw);
#endif
  }

  /// The big-endian word at a 4-byte-aligned byte offset.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t word(std::size_t byte) const {
    return big_endian(raw_word(byte));
  }

  /// The 32 bits starting at bit position `bit`.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t peek32(std::uint64_t bit) const {
    const std::size_t byte = static_cast<std::size_t>(bit >> 5) << 2;
    const unsigned shift = static_cast<unsigned>(bit & 31);
    const std::uint32_t hi = word(byte);
    if (!shift) return hi;
    return (hi << shift) | (word(byte + 4) >> (32 - shift));
  }

  /// An n-bit two's complement value at `bit`, 0 <= n <= 32.
  SIGPU_HD SIGPU_FORCEINLINE std::int32_t signed_at(std::uint64_t bit, unsigned n) const {
    if (n == 0) return 0;
    return static_cast<std::int32_t>(peek32(bit)) >> (32 - n);
  }
};

/// The quotient of the code at `bit` (its run of zero bits), or a value above
/// kRiceMaxWalkQuotient when the run is longer than that.
SIGPU_HD SIGPU_FORCEINLINE unsigned rice_quotient(const BitWindow& w, std::uint64_t bit) {
  unsigned q = 0;
  std::uint32_t v = w.peek32(bit);
  while (v == 0) {
    q += 32;
    if (q > kRiceMaxWalkQuotient) return q;
    v = w.peek32(bit + q);
  }
#ifdef __CUDA_ARCH__
  return q + static_cast<unsigned>(__clz(v));
#else
  return q + static_cast<unsigned>(__builtin_clz(v));
#endif
}

/// Bits of the code at `bit` with parameter k, or kRiceUnfollowed.
SIGPU_HD SIGPU_FORCEINLINE std::uint64_t rice_code_bits(const BitWindow& w, std::uint64_t bit,
                                                        unsigned k) {
  const unsigned q = rice_quotient(w, bit);
  return q > kRiceMaxWalkQuotient ? kRiceUnfollowed : q + 1 + k;
}

/// How many of a warp's 32 segments a round uses for `left` codes of parameter k: about as
/// many as their expected length needs (q is mostly 0 or 1 for a well-chosen k) plus one.
/// Lanes past the partition would only lengthen the chain of corrections; when the guess is
/// short, another round follows.
SIGPU_HD inline unsigned rice_active_segments(unsigned left, unsigned k) {
  const std::uint64_t bits = std::uint64_t(left) * (k + 2);
  const std::uint64_t n = bits / kRiceSegmentBits + 2;
  return n < 32 ? static_cast<unsigned>(n) : 32u;
}

/// What one lane knows about its segment [start, start + kRiceSegmentBits).
struct RiceSegment {
  std::uint64_t starts = 0;  ///< bit b: a code starts at start + b
  std::uint64_t exit = 0;    ///< where the first code after the segment starts (or unfollowed)
};

/// Walks the codes of the segment at `start` from `entry` (a code start at or after `start`).
/// `known` is the lane's previous walk of the same segment from another entry (or empty): when
/// this walk reaches one of its starts, the rest of the chain is the known one.
SIGPU_HD inline RiceSegment walk_rice_segment(const BitWindow& w, unsigned k, std::uint64_t start,
                                              std::uint64_t entry, const RiceSegment& known) {
  const std::uint64_t end = start + kRiceSegmentBits;
  RiceSegment s;
  std::uint64_t p = entry;
  while (p < end) {
    const unsigned b = static_cast<unsigned>(p - start);
    if ((known.starts >> b) & 1) {
      s.starts |= known.starts & (~std::uint64_t{0} << b);
      s.exit = known.exit;
      return s;
    }
    s.starts |= std::uint64_t{1} << b;
    const std::uint64_t len = rice_code_bits(w, p, k);
    if (len == kRiceUnfollowed) {
      s.exit = kRiceUnfollowed;
      return s;
    }
    p += len;
  }
  s.exit = p;
  return s;
}

/// Decodes the codes whose starts are set in `starts` (segment at `start`), the first being
/// code number `first` of a partition of `count` codes, into out[first ..]; codes numbered
/// `count` or more are not the partition's and are left alone. Returns false when a code of the
/// partition does not fit in 32 bits or was not followed (the caller decodes the frame
/// serially, which names the error). *last_end gets where code count - 1 ends, if it is here.
template <typename S>
SIGPU_HD bool decode_rice_segment(const BitWindow& w, unsigned k, std::uint64_t start,
                                  std::uint64_t starts, unsigned first, unsigned count, S* out,
                                  std::uint64_t* last_end) {
  const std::uint32_t max_quotient = 0xFFFFFFFFu >> k;
  for (unsigned i = first; starts && i < count; ++i) {
#ifdef __CUDA_ARCH__
    const unsigned b = static_cast<unsigned>(__ffsll(static_cast<long long>(starts)) - 1);
#else
    const unsigned b = static_cast<unsigned>(__builtin_ctzll(starts));
#endif
    starts &= starts - 1;
    const std::uint64_t p = start + b;
    const unsigned q = rice_quotient(w, p);
    if (q > kRiceMaxWalkQuotient || q > max_quotient) return false;
    const std::uint32_t low = k ? w.peek32(p + q + 1) >> (32 - k) : 0;
    out[i] = zigzag_decode((q << k) | low);
    if (i + 1 == count) *last_end = p + q + 1 + k;
  }
  return true;
}

}  // namespace sigpu::flac
