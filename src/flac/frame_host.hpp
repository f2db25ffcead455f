// Host-side decoding of one frame, picking 32- or 64-bit scratch as the frame needs.
#pragma once

#include <cstdint>
#include <vector>

#include "flac/frame.hpp"

namespace sigpu::flac {

struct HostFrameResult {
  FrameError error = FrameError::ok;
  FrameHeader header;
  std::size_t end = 0;
};

/// Parses the header at span.pos and decodes the frame; on success calls
/// sink(index_in_block, channel, value) for every sample. `bps` is the stream's bit depth,
/// used when the header defers to STREAMINFO.
template <typename Sink>
HostFrameResult decode_frame_host(const std::uint8_t* data, std::size_t size, FrameSpan span,
                                  unsigned stream_bps, bool check_crc,
                                  std::vector<std::int64_t>& scratch, Sink&& sink) {
  HostFrameResult r;
  const std::size_t avail = std::min<std::size_t>(size - span.pos, kMaxHeaderBytes);
  r.error = parse_frame_header(data + span.pos, avail, r.header, kCrcTables.crc8);
  if (r.error != FrameError::ok) return r;
  const FrameHeader& h = r.header;
  const unsigned bps = h.bits_per_sample ? h.bits_per_sample : stream_bps;
  if (bps == 0) {
    r.error = FrameError::params_missing;
    return r;
  }
  scratch.resize(std::size_t(h.channels) * h.block_size);
  if (needs_wide_scratch(h, bps)) {
    r.error =
        decode_frame(data, size, span, h, bps, scratch.data(), kCrcTables.crc16, check_crc, &r.end);
    if (r.error == FrameError::ok) store_frame(h, scratch.data(), sink);
  } else {
    auto* narrow = reinterpret_cast<std::int32_t*>(scratch.data());
    r.error = decode_frame(data, size, span, h, bps, narrow, kCrcTables.crc16, check_crc, &r.end);
    if (r.error == FrameError::ok) store_frame(h, narrow, sink);
  }
  return r;
}

}  // namespace sigpu::flac
