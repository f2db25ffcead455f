// Host-side parsing of one coded frame: the frame header, the picture header(s) and the slice
// table, checked against the frame's bytes. Slice data is decoded elsewhere (CPU or GPU).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <sigpu/prores.hpp>

#include "prores/geometry.hpp"

namespace sigpu::prores {

struct SliceRef {
  std::uint32_t offset = 0;  ///< from the first byte of the frame (the size field)
  std::uint32_t size = 0;
  int error = 0;  ///< a VldError found while parsing the table; the slice is then concealed
};

struct PictureRef {
  int log2_slice_mbs = 3;
  int slice_count = 0;
  int first_slice = 0;  ///< index into ParsedFrame::slices
  int error = 0;        ///< kVldBadPicture when the header was unusable
};

struct ParsedFrame {
  FrameHeader header;
  FrameShape shape;
  PixelFormat format;
  int pictures = 1;
  PictureRef picture[2];
  std::vector<SliceRef> slices;
};

/// Parses everything but the slice data. Throws Error when the frame header itself is unusable
/// (then nothing about the frame is known); picture and slice table problems are recorded in
/// the result so that the rest of the frame still decodes.
ParsedFrame parse_frame(std::span<const std::uint8_t> frame, int bit_depth);

/// Output precision FFmpeg picks: 12 for the 4444 FourCCs, 10 for the others; without a FourCC
/// (raw frames), 12 for 4:4:4 chroma.
int default_bit_depth(std::uint32_t fourcc, const FrameHeader& header);

}  // namespace sigpu::prores
