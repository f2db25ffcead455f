// HEVC in MP4/MOV/Matroska: the hvcC decoder configuration record (ISO/IEC 14496-15, 8.3.3)
// and samples of length-prefixed NAL units, turned into an Annex B byte stream.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sigpu::hevc {

/// True when codec extradata is an hvcC record rather than Annex B parameter sets (what FFmpeg
/// tests: a start code begins with two zero bytes, a record with configurationVersion 1).
bool is_hvcc(std::span<const std::uint8_t> extradata);

struct Hvcc {
  int length_size = 4;  ///< lengthSizeMinusOne + 1: 1, 2 or 4
  std::vector<std::uint8_t>
      annexb;  ///< the NAL unit arrays (VPS, SPS, PPS, SEI), start codes before each
};

/// Parses an hvcC record; throws InputError naming the field on a record cut short or a length
/// size of 3.
Hvcc parse_hvcc(std::span<const std::uint8_t> record);

/// Appends a sample's NAL units, each after a start code, to `out`. Returns "" or, when a
/// length prefix runs past the sample, what was wrong (the NAL units before it are appended).
std::string append_annexb(std::span<const std::uint8_t> sample, int length_size,
                          std::vector<std::uint8_t>& out);

}  // namespace sigpu::hevc
