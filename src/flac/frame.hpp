// One frame: subframes into a planar scratch, then stereo decorrelation into a sink.
// Shared by the serial reference, the all-core CPU backend and the CUDA kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/bit_reader.hpp"
#include "core/crc.hpp"
#include "core/hd.hpp"
#include "flac/frame_header.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac {

/// The side channel of a decorrelated pair carries one extra bit.
SIGPU_HD inline unsigned subframe_bits(const FrameHeader& h, unsigned bps, unsigned channel) {
  const bool side = (h.assignment == kLeftSide && channel == 1) ||
                    (h.assignment == kSideRight && channel == 0) ||
                    (h.assignment == kMidSide && channel == 1);
  return bps + (side ? 1 : 0);
}

/// 32-bit audio with a side channel needs 64-bit scratch samples.
SIGPU_HD inline bool needs_wide_scratch(const FrameHeader& h, unsigned bps) {
  return bps == 32 && h.assignment >= kLeftSide;
}

struct FrameSpan {
  std::size_t pos = 0;  ///< first byte of the header
  std::size_t end = 0;  ///< one past the CRC-16, or 0 when not yet known
};

/// The end of a frame after its last subframe: zero padding to the byte, the CRC-16, and the
/// frame's end checked against span.end (see decode_frame).
SIGPU_HD inline FrameError finish_frame(BitReader& br, const std::uint8_t* data, std::size_t size,
                                        FrameSpan span, const std::uint16_t* crc16_table,
                                        bool check_crc, std::size_t* frame_end) {
  const unsigned misalign = static_cast<unsigned>(br.bit_position() & 7);
  if (misalign && br.read(8 - misalign) != 0) return FrameError::bad_padding;
  const std::size_t end = br.byte_position() + 2;
  if (br.overrun() || end > size) return FrameError::truncated;
  *frame_end = end;
  if (span.end && end != span.end)
    return crc16_update(0, data + span.pos, end - span.pos, crc16_table) == 0
               ? FrameError::relink
               : FrameError::length_mismatch;
  if (!span.end && check_crc && crc16_update(0, data + span.pos, end - span.pos, crc16_table) != 0)
    return FrameError::frame_crc;
  return FrameError::ok;
}

/// Decodes the subframes of the frame at span.pos into scratch[c * block_size + i] and sets
/// *frame_end to one past its CRC-16. With a known span.end (the search's link, CRC-16 already
/// verified over it) the frame must end exactly there; if it ends elsewhere but its own CRC-16
/// holds, the link was to a false header whose CRC happened (or was made) to match, and
/// FrameError::relink tells the caller to correct the chain. Without span.end, check_crc
/// verifies the CRC-16. With `params` the predictors are only recorded there (params[c]) for
/// restore_subframe to run later; without, each subframe is restored as soon as it is read.
/// `bulk` reads the subframes' samples and residuals (see SerialBulk).
template <typename S, typename Bulk = SerialBulk>
SIGPU_HD FrameError decode_frame(const std::uint8_t* data, std::size_t size, FrameSpan span,
                                 const FrameHeader& h, unsigned bps, S* scratch,
                                 const std::uint16_t* crc16_table, bool check_crc,
                                 std::size_t* frame_end, SubframeParams* params = nullptr,
                                 const Bulk& bulk = {}) {
  BitReader br(data, size, span.pos + h.header_bytes);
  for (unsigned c = 0; c < h.channels; ++c) {
    S* x = scratch + std::size_t(c) * h.block_size;
    SubframeParams own;
    SubframeParams& p = params ? params[c] : own;
    const FrameError e = parse_subframe(br, x, h.block_size, subframe_bits(h, bps, c), p, bulk);
    if (e != FrameError::ok) return e;
    if (!params) restore_subframe(p, x, h.block_size);
  }
  return finish_frame(br, data, size, span, crc16_table, check_crc, frame_end);
}

/// One output sample of a restored frame: channel c at index i, stereo decorrelation undone.
template <typename S>
SIGPU_HD SIGPU_FORCEINLINE std::int32_t decorrelated_sample(unsigned assignment, const S* x,
                                                            unsigned n, unsigned i, unsigned c) {
  // Wrapping arithmetic (see predict.hpp): exact for valid streams, defined for hostile ones.
  const Wrap a = static_cast<Wrap>(std::int64_t(x[i]));
  switch (assignment) {
    case kLeftSide:
      return std::int32_t(c == 0 ? a : a - static_cast<Wrap>(std::int64_t(x[n + i])));
    case kSideRight:
      return std::int32_t(c == 0 ? a + static_cast<Wrap>(std::int64_t(x[n + i]))
                                 : Wrap(std::int64_t(x[n + i])));
    case kMidSide: {
      const Wrap side = static_cast<Wrap>(std::int64_t(x[n + i]));
      const Wrap mid = (a << 1) | (side & 1);
      return std::int32_t(static_cast<std::int64_t>(c == 0 ? mid + side : mid - side) >> 1);
    }
    default:
      return std::int32_t(x[std::size_t(c) * n + i]);
  }
}

/// Both channels of a stereo pair (a, b: the frame's subframes 0 and 1 at one index), as
/// decorrelated_sample gives them, without branching on the assignment: the lanes of a GPU
/// warp hold frames of different modes. W is the width of the sums, std::int64_t or
/// std::int32_t: 32-bit sums wrap, which leaves the results' low 31 bits exact (all of them
/// while a and b fit 30 bits), and take the GPU half the instructions of 64-bit ones.
template <typename W = std::int64_t>
SIGPU_HD SIGPU_FORCEINLINE void decorrelated_pair(unsigned assignment, std::int32_t a,
                                                  std::int32_t b, std::int32_t& left,
                                                  std::int32_t& right) {
  using U = std::make_unsigned_t<W>;
  const U x = static_cast<U>(W{a}), y = static_cast<U>(W{b}), mid = (x << 1) | (y & 1);
  const auto w = [](U v) { return static_cast<W>(v); };
  left = static_cast<std::int32_t>(assignment == kSideRight ? w(x + y)
                                   : assignment == kMidSide ? w(mid + y) >> 1
                                                            : w(x));
  right = static_cast<std::int32_t>(assignment == kLeftSide  ? w(x - y)
                                    : assignment == kMidSide ? w(mid - y) >> 1
                                                             : w(y));
}

template <unsigned Assignment, typename S, typename Sink>
SIGPU_HD void store_frame_as(const FrameHeader& h, const S* x, Sink& sink) {
  const unsigned n = h.block_size;
  if constexpr (Assignment != 0) {  // a decorrelated pair: both channels known at compile time
    for (unsigned i = 0; i < n; ++i) {
      sink(i, 0, decorrelated_sample(Assignment, x, n, i, 0));
      sink(i, 1, decorrelated_sample(Assignment, x, n, i, 1));
    }
  } else {
    for (unsigned i = 0; i < n; ++i)
      for (unsigned c = 0; c < h.channels; ++c) sink(i, c, decorrelated_sample(0u, x, n, i, c));
  }
}

/// Hands every sample of a restored frame to sink(index_in_block, channel, value). The stereo
/// mode is chosen once per frame, so decorrelated_sample's switch folds away in each loop.
template <typename S, typename Sink>
SIGPU_HD void store_frame(const FrameHeader& h, const S* x, Sink&& sink) {
  switch (h.assignment) {
    case kLeftSide:
      return store_frame_as<kLeftSide>(h, x, sink);
    case kSideRight:
      return store_frame_as<kSideRight>(h, x, sink);
    case kMidSide:
      return store_frame_as<kMidSide>(h, x, sink);
    default:
      return store_frame_as<0>(h, x, sink);
  }
}

}  // namespace sigpu::flac
