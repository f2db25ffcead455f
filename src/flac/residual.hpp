// Partitioned Rice residual decoding (RFC 9639 section 9.2.7), shared by host and device.
// This is the plain twin: one thread walks the partitions bit by bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/bit_reader.hpp"
#include "core/hd.hpp"
#include "flac/errors.hpp"

namespace sigpu::flac {

SIGPU_HD SIGPU_FORCEINLINE std::int32_t zigzag_decode(std::uint32_t u) {
  return static_cast<std::int32_t>(u >> 1) ^ -static_cast<std::int32_t>(u & 1);
}

/// How a subframe's residual is partitioned, from its header.
struct ResidualLayout {
  unsigned param_bits = 0;  ///< bits of each partition's Rice parameter
  unsigned escape = 0;      ///< the parameter value that marks an escaped partition
  unsigned partitions = 0, partition_size = 0;
};

/// Reads the coding method and partition order, checked against the block of n samples and the
/// predictor order.
SIGPU_HD inline FrameError read_residual_layout(BitReader& br, unsigned n, unsigned order,
                                                ResidualLayout& l) {
  const unsigned method = br.read(2);
  if (method > 1) return FrameError::bad_residual_coding;
  l.param_bits = method ? 5 : 4;
  l.escape = method ? 31 : 15;
  const unsigned partition_order = br.read(4);
  l.partitions = 1u << partition_order;
  l.partition_size = n >> partition_order;
  if ((l.partition_size << partition_order) != n || l.partition_size < order)
    return FrameError::bad_partition_order;
  return FrameError::ok;
}

#ifndef __CUDA_ARCH__
/// Rice codes out[i .. end) with parameter k, on the host: the codes are taken from a 64-bit
/// word loaded at the position (at least 57 valid bits) until the next one does not fit, then
/// the word is loaded again; the position is the only state carried over and stays in a
/// register (the BitReader's cache and count, behind a reference, go through memory on every
/// read). Stops at a code that no fresh word holds (a long quotient, the last bytes of the data,
/// an overflowing quotient), returning the index reached; br is left after the codes read, and
/// the caller reads the rest the general way.
template <typename S>
inline unsigned rice_codes_host(BitReader& br, S* out, unsigned i, unsigned end, unsigned k) {
  std::uint64_t pos = br.bit_position();
  const std::size_t size = br.size();
  const std::uint64_t fast_end = size >= 8 ? std::uint64_t(size - 8) * 8 : 0;
  const unsigned max_quotient = k ? std::min(56u, 0xFFFFFFFFu >> k) : 56u;
  while (i < end && pos < fast_end) {
    std::uint64_t w;
    std::memcpy(&w, br.data() + (pos >> 3), 8);
    w = __builtin_bswap64(w) << (pos & 7);
    unsigned valid = 57, taken = 0;
    for (; i < end; ++i) {
      const unsigned q = static_cast<unsigned>(count_leading_zeros64(w));
      const unsigned length = q + 1 + k;
      if (q > max_quotient || length > valid) break;
      const std::uint32_t low = k ? static_cast<std::uint32_t>((w << q << 1) >> (64 - k)) : 0;
      out[i] = zigzag_decode((std::uint32_t{q} << k) | low);
      w <<= length;  // length <= 57
      valid -= length;
      taken += length;
    }
    if (!taken) break;
    pos += taken;
  }
  br.seek(pos);
  return i;
}
#endif

/// Decodes the residual of a subframe with `n` samples and predictor order `order` into
/// out[order .. n).
template <typename S>
SIGPU_HD FrameError decode_residual(BitReader& br, S* out, unsigned n, unsigned order) {
  ResidualLayout l;
  const FrameError e = read_residual_layout(br, n, order, l);
  if (e != FrameError::ok) return e;
  unsigned i = order;
  for (unsigned p = 0; p < l.partitions; ++p) {
    const unsigned end = (p + 1) * l.partition_size;
    const unsigned k = br.read(l.param_bits);
    if (k == l.escape) {
      const unsigned bits = br.read(5);
      for (; i < end; ++i) out[i] = br.read_signed(bits);
    } else {
      const std::uint32_t max_quotient = 0xFFFFFFFFu >> k;
#ifndef __CUDA_ARCH__
      i = rice_codes_host(br, out, i, end, k);
#endif
      for (; i < end; ++i) {
        const std::uint32_t q = br.read_unary();
        if (q > max_quotient)
          return br.overrun() ? FrameError::truncated : FrameError::rice_overflow;
        out[i] = zigzag_decode((q << k) | br.read(k));
      }
    }
    if (br.overrun()) return FrameError::truncated;
  }
  return FrameError::ok;
}

}  // namespace sigpu::flac
