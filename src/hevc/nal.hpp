// Annex B byte streams: finding NAL units and removing emulation prevention bytes (7.3.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sigpu::hevc {

enum NalType : int {
  kNalTrailN = 0,
  kNalTrailR = 1,
  kNalRaslN = 8,
  kNalRaslR = 9,
  kNalBlaWLp = 16,
  kNalIdrWRadl = 19,
  kNalIdrNLp = 20,
  kNalCraNut = 21,
  kNalRsvIrap23 = 23,
  kNalVps = 32,
  kNalSps = 33,
  kNalPps = 34,
  kNalAud = 35,
  kNalEos = 36,
  kNalEob = 37,
  kNalFd = 38,
  kNalPrefixSei = 39,
  kNalSuffixSei = 40,
};

/// Where one NAL unit lies in the byte stream.
struct NalSpan {
  std::size_t start_code = 0;      ///< offset of the start code prefix
  std::size_t begin = 0, end = 0;  ///< the NAL unit's bytes (header included), trailing zeros cut
};

/// Splits an Annex B byte stream at its start codes. Bytes before the first start code are
/// ignored (B.2 allows leading zero bytes only; anything else there cannot be decoded anyway).
std::vector<NalSpan> split_annexb(std::span<const std::uint8_t> stream);

/// A NAL unit with emulation prevention removed.
struct NalUnit {
  int type = 0, layer_id = 0, temporal_id = 0;
  std::vector<std::uint8_t> rbsp;  ///< payload after the 2-byte header
  /// Positions in rbsp before which an emulation prevention byte was removed, ascending; entry
  /// point offsets count those bytes (7.4.7.1), so they map through this list.
  std::vector<std::size_t> removed;
  /// Offset in rbsp that corresponds to `escaped` bytes of the payload as coded.
  std::size_t rbsp_offset(std::size_t escaped) const;
};

/// Parses the NAL unit header and unescapes the payload; throws DecodeError on a bad header.
NalUnit parse_nal(std::span<const std::uint8_t> nal);

const char* nal_type_name(int type);

}  // namespace sigpu::hevc
