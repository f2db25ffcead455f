// The successor search of the frame search (find_successor, frame_search.hpp) with a warp per
// candidate. One thread taking the CRC-16 of a whole frame byte by byte made the link step the
// longest of the search (2.1 ms of the tiled hour's 42,181 frames on the H100): a serial chain of
// ~11,000 table lookups per thread, and 32 cache lines per load of its warp. Here the warp takes
// each span's CRC 128 consecutive bytes per load (crc_combine.hpp, Crc16Words); the rule, the
// order of the tests and the answer are find_successor's.
#pragma once

#include <cstdint>

#include "core/crc_combine.hpp"
#include "flac/frame_search.hpp"

namespace sigpu::flac::cuda {

/// The CRC-16 (zero start) of bytes [from, to) of d, d 4-byte aligned. All 32 lanes call it and
/// all get the CRC. Reads only bytes of [from & ~3, to).
__device__ inline std::uint16_t warp_crc16(const std::uint8_t* d, std::uint64_t from,
                                           std::uint64_t to, const Crc16Words& t) {
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t first = from & ~std::uint64_t{3}, end = (to + 3) & ~std::uint64_t{3};
  const std::uint64_t words = (end - first) / 4;
  // The span's last word falls on lane 31, so lane L's last word is 31 - L words from the end.
  const unsigned offset = static_cast<unsigned>((32 - words % 32) % 32);
  // Word m of the span, as a 32-bit word of the zero-started stream.
  auto word = [&](std::uint64_t m) {
    const std::uint64_t at = first + 4 * m;
    std::uint32_t w = 0;
    if (at + 4 <= to) {
      w = *reinterpret_cast<const std::uint32_t*>(d + at);
    } else {  // the last word runs past the span: its bytes up to `to`, zeros after
      for (unsigned b = 0; at + b < to; ++b) w |= std::uint32_t(d[at + b]) << (8 * b);
    }
    // Zeros ahead of a span starting at zero leave its CRC as it is.
    if (at < from) w &= ~0u << (8 * static_cast<unsigned>(from - at));
    return w;
  };
  auto step = [&](std::uint16_t sum, std::uint32_t w) {
    return static_cast<std::uint16_t>(t.skip[0][sum >> 8] ^ t.skip[1][sum & 0xFF] ^
                                      t.byte[3][w & 0xFF] ^ t.byte[2][(w >> 8) & 0xFF] ^
                                      t.byte[1][(w >> 16) & 0xFF] ^ t.byte[0][w >> 24]);
  };
  // Four loads in flight per lane: one at a time, each turn of the loop waited for its word
  // from memory, and the hour's links took 0.42 ms (H100, Nsight Compute).
  std::uint16_t sum = 0;
  std::uint64_t m = (lane + 32 - offset) % 32;
  for (; m + 96 < words; m += 128) {
    std::uint32_t w[4];
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) w[j] = word(m + 32 * j);
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) sum = step(sum, w[j]);
  }
  for (; m < words; m += 32) sum = step(sum, word(m));
#pragma unroll
  for (unsigned level = 0; level < 5; ++level) {
    const std::uint16_t right =
        static_cast<std::uint16_t>(__shfl_down_sync(0xFFFFFFFFu, sum, 1u << level));
    if (lane % (2u << level) == 0)
      sum = static_cast<std::uint16_t>(crc16_mulmod(sum, t.level[level]) ^ right);
  }
  sum = static_cast<std::uint16_t>(__shfl_sync(0xFFFFFFFFu, sum, 0));
  return crc16_mulmod(sum, t.unpad[end - to]);  // the zeros appended to the last word
}

/// find_successor with a warp: every lane gets the answer.
__device__ inline std::int32_t warp_find_successor(const std::uint8_t* data, const Candidate* cands,
                                                   std::uint32_t count, std::uint32_t i,
                                                   std::uint64_t max_span, const Crc16Words& t) {
  const Candidate a = cands[i];
  std::uint16_t crc = 0;
  std::uint64_t at = a.pos;
  for (std::uint32_t j = i + 1; j < count; ++j) {
    const Candidate b = cands[j];
    if (b.pos - a.pos > max_span) break;
    crc =
        static_cast<std::uint16_t>(t.shift.shift(crc, b.pos - at) ^ warp_crc16(data, at, b.pos, t));
    at = b.pos;
    if (crc == 0 && continues(a, b)) return static_cast<std::int32_t>(j);
  }
  return -1;
}

}  // namespace sigpu::flac::cuda
