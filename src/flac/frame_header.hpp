// Frame header parsing (RFC 9639 section 9.1), shared by host and device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/crc.hpp"
#include "core/hd.hpp"
#include "flac/errors.hpp"

namespace sigpu::flac {

/// Longest possible header: sync 2, codes 2, number 7, block size 2, sample rate 2, CRC-8 1.
inline constexpr int kMaxHeaderBytes = 16;

/// Channel assignments 8-10 code two decorrelated channels.
enum ChannelAssignment : std::uint8_t { kLeftSide = 8, kSideRight = 9, kMidSide = 10 };

struct FrameHeader {
  std::uint64_t number = 0;  ///< frame number (fixed block size) or first sample (variable)
  std::uint32_t block_size = 0;
  std::uint32_t sample_rate = 0;  ///< 0: taken from STREAMINFO
  std::uint8_t assignment = 0;    ///< 0-7 independent channels (n+1), 8-10 stereo decorrelation
  std::uint8_t channels = 0;
  std::uint8_t bits_per_sample = 0;  ///< 0: taken from STREAMINFO
  std::uint8_t header_bytes = 0;     ///< including the CRC-8
  bool variable_block_size = false;
};

SIGPU_HD inline bool is_sync(const std::uint8_t* p) {
  return p[0] == 0xFF && (p[1] & 0xFE) == 0xF8;
}

/// Parses the header at p with `avail` readable bytes and checks its CRC-8.
SIGPU_HD inline FrameError parse_frame_header(const std::uint8_t* p, std::size_t avail,
                                              FrameHeader& h, const std::uint8_t* crc8_table) {
  if (avail < 6) return FrameError::truncated;
  if (!is_sync(p)) return FrameError::bad_sync;
  h.variable_block_size = p[1] & 1;
  const unsigned bs_code = p[2] >> 4, sr_code = p[2] & 15;
  const unsigned ch_code = p[3] >> 4, ss_code = (p[3] >> 1) & 7;
  if (p[3] & 1) return FrameError::reserved_bit;
  if (bs_code == 0) return FrameError::bad_block_size;
  if (sr_code == 15) return FrameError::bad_sample_rate;
  if (ch_code > 10) return FrameError::bad_channels;
  if (ss_code == 3) return FrameError::bad_sample_size;

  // UTF-8-like coded number: the count of leading ones in the first byte gives the length.
  std::size_t pos = 4;
  const unsigned first = p[pos++];
  unsigned extra;
  std::uint64_t v;
  if (first < 0x80) {
    extra = 0;
    v = first;
  } else if ((first & 0xE0) == 0xC0) {
    extra = 1;
    v = first & 0x1F;
  } else if ((first & 0xF0) == 0xE0) {
    extra = 2;
    v = first & 0x0F;
  } else if ((first & 0xF8) == 0xF0) {
    extra = 3;
    v = first & 0x07;
  } else if ((first & 0xFC) == 0xF8) {
    extra = 4;
    v = first & 0x03;
  } else if ((first & 0xFE) == 0xFC) {
    extra = 5;
    v = first & 0x01;
  } else if (first == 0xFE) {
    extra = 6;
    v = 0;
  } else
    return FrameError::bad_number;
  // A frame number has at most 31 bits (6 bytes); only sample numbers use the 7-byte form.
  if (extra == 6 && !h.variable_block_size) return FrameError::bad_number;
  if (avail < pos + extra + 1) return FrameError::truncated;
  for (unsigned i = 0; i < extra; ++i) {
    const unsigned c = p[pos++];
    if ((c & 0xC0) != 0x80) return FrameError::bad_number;
    v = (v << 6) | (c & 0x3F);
  }
  h.number = v;

  if (bs_code == 1)
    h.block_size = 192;
  else if (bs_code <= 5)
    h.block_size = 576u << (bs_code - 2);
  else if (bs_code == 6) {
    if (avail < pos + 1) return FrameError::truncated;
    h.block_size = p[pos++] + 1u;
  } else if (bs_code == 7) {
    if (avail < pos + 2) return FrameError::truncated;
    h.block_size = ((unsigned(p[pos]) << 8) | p[pos + 1]) + 1u;
    pos += 2;  // 65536 (0xFFFF + 1) is decoded, as libFLAC up to 1.4.2 does
  } else
    h.block_size = 256u << (bs_code - 8);

  constexpr std::uint32_t kRates[12] = {0,     88200, 176400, 192000, 8000,  16000,
                                        22050, 24000, 32000,  44100,  48000, 96000};
  if (sr_code < 12)
    h.sample_rate = kRates[sr_code];
  else {
    const unsigned n = sr_code == 12 ? 1 : 2;
    if (avail < pos + n) return FrameError::truncated;
    const unsigned raw = n == 1 ? p[pos] : (unsigned(p[pos]) << 8) | p[pos + 1];
    pos += n;
    h.sample_rate = sr_code == 12 ? raw * 1000 : sr_code == 13 ? raw : raw * 10;
    if (h.sample_rate == 0) return FrameError::bad_sample_rate;
  }

  constexpr std::uint8_t kSizes[8] = {0, 8, 12, 0, 16, 20, 24, 32};
  h.bits_per_sample = kSizes[ss_code];
  h.assignment = static_cast<std::uint8_t>(ch_code);
  h.channels = static_cast<std::uint8_t>(ch_code < 8 ? ch_code + 1 : 2);

  if (avail < pos + 1) return FrameError::truncated;
  // A null table skips the check, for headers already verified.
  if (crc8_table && crc8_update(0, p, pos, crc8_table) != p[pos]) return FrameError::header_crc;
  h.header_bytes = static_cast<std::uint8_t>(pos + 1);
  return FrameError::ok;
}

}  // namespace sigpu::flac
