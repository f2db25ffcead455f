// Parallel frame search (after GPURAKU): every byte position is tested for a frame header,
// then each candidate looks for its successor, a later candidate whose number continues the
// sequence and at which the CRC-16 running from this candidate comes out zero. Sync codes
// that occur inside audio data almost never pass the header CRC-8, and practically never
// both the number check and the CRC-16, so the true frames form the chain of successors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/crc.hpp"
#include "core/hd.hpp"
#include "flac/frame_header.hpp"

namespace sigpu::flac {

struct Candidate {
  std::uint64_t pos = 0;
  std::uint64_t number = 0;  ///< frame number or first sample, as coded
  std::uint32_t block_size = 0;
  std::uint32_t sample_rate = 0;  ///< as coded, 0 = from STREAMINFO
  std::uint8_t channels = 0;
  std::uint8_t bits_per_sample = 0;  ///< as coded, 0 = from STREAMINFO
  std::uint8_t variable = 0;
  std::int32_t next = -1;  ///< index of the verified successor, -1 if none
};

SIGPU_HD inline bool header_candidate(const std::uint8_t* data, std::size_t size, std::size_t p,
                                      const std::uint8_t* crc8_table, Candidate& c) {
  if (p + 1 >= size || !is_sync(data + p)) return false;
  FrameHeader h;
  const std::size_t avail = size - p < kMaxHeaderBytes ? size - p : kMaxHeaderBytes;
  if (parse_frame_header(data + p, avail, h, crc8_table) != FrameError::ok) return false;
  c.pos = p;
  c.number = h.number;
  c.block_size = h.block_size;
  c.sample_rate = h.sample_rate;
  c.channels = h.channels;
  c.bits_per_sample = h.bits_per_sample;
  c.variable = h.variable_block_size;
  c.next = -1;
  return true;
}

SIGPU_HD inline bool continues(const Candidate& a, const Candidate& b) {
  if (a.variable != b.variable) return false;
  return a.variable ? b.number == a.number + a.block_size : b.number == a.number + 1;
}

/// Searches candidates after i (sorted by position) for the verified successor, looking at
/// most max_span bytes ahead. Returns its index or -1.
SIGPU_HD inline std::int32_t find_successor(const std::uint8_t* data, const Candidate* cands,
                                            std::uint32_t count, std::uint32_t i,
                                            std::uint64_t max_span,
                                            const std::uint16_t* crc16_table) {
  const Candidate& a = cands[i];
  std::uint16_t crc = 0;
  std::uint64_t at = a.pos;
  for (std::uint32_t j = i + 1; j < count; ++j) {
    const Candidate& b = cands[j];
    if (b.pos - a.pos > max_span) break;
    crc = crc16_update(crc, data + at, b.pos - at, crc16_table);
    at = b.pos;
    if (crc == 0 && continues(a, b)) return static_cast<std::int32_t>(j);
  }
  return -1;
}

/// An upper bound on a sensible frame's size, used only to limit the successor search; a
/// frame larger than this is still decoded, through the slower path for unverified frames.
SIGPU_HD inline std::uint64_t search_span(const Candidate& c, unsigned stream_bps,
                                          std::uint32_t max_frame_size) {
  const unsigned bps = c.bits_per_sample ? c.bits_per_sample : stream_bps;
  const std::uint64_t verbatim =
      kMaxHeaderBytes + 2 +
      std::uint64_t(c.channels) * ((std::uint64_t(c.block_size) * (bps + 1) + 7) / 8 + 8);
  const std::uint64_t span = verbatim > max_frame_size ? verbatim : max_frame_size;
  return span + 64;
}

}  // namespace sigpu::flac
