// The host's part of ranged decoding (range_decode.cpp), for the drivers that decode many ranges
// their own way (clip_decode.cpp): every range's window of whole frames, found once, and the
// general decode of windows that are not decoded from their own index.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

#include "flac/frame_index.hpp"

namespace sigpu::flac {

/// Bytes [begin, end) of a file that start at a frame and end before one (or at the end), and
/// the first sample of that first frame. When the window ends before a frame, every frame in it
/// has a verified successor: their chain is the window's index (positions in the window's
/// bytes), and a backend decodes it without searching the bytes again. Empty where the window
/// runs to the file's end (its last frame unverified) or a frame disagrees with the stream.
struct Window {
  std::uint64_t begin = 0, end = 0, first_sample = 0;
  FrameIndex index;
};

/// How the frames of a window's index are known to follow each other: `verified` by the CRC-16
/// of every frame (the frame search's rule), `numbered` by their numbers alone, found by a pass
/// that reads only headers, for a decoder that checks every frame's CRC-16 itself.
enum class Links { verified, numbered };

/// Where the ranges of a call lie: each distinct file's metadata (parsed once), each range's
/// window, or why a range has none.
struct RangePlan {
  std::vector<Stream> streams;
  std::vector<std::size_t> stream_of;  ///< per range: its file's entry in `streams`
  std::vector<Window> windows;         ///< per range
  std::vector<std::string> errors;     ///< per range: empty, or why it has no window
};

/// The windows of `ranges`: one range per core, or a single range's frame search on all cores.
RangePlan plan_ranges(std::span<const FileRange> ranges, Links links = Links::verified);

/// Ranges `which` of a plan (without errors) decoded the general way: their windows as files
/// (decode_batch, one batch per stream shape), each range then cut out and reported with the
/// file's positions, as decode_range reports it. Result k belongs to ranges[which[k]].
std::vector<BatchResult> decode_windows(std::span<const FileRange> ranges, const RangePlan& plan,
                                        std::span<const std::size_t> which, const DecodeOptions& o);

}  // namespace sigpu::flac
