// SEI messages (7.3.5, D.2): the decoded picture hash (D.3.19) is parsed and checked; every
// other payload is skipped.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "hevc/picture.hpp"

namespace sigpu::hevc {

struct PictureHash {
  int type = 0;  ///< 0 MD5, 1 CRC, 2 checksum
  std::array<std::array<std::uint8_t, 16>, 3> md5{};
  std::array<std::uint32_t, 3> value{};  ///< CRC or checksum per component
  const char* kind() const { return type == 0 ? "MD5" : (type == 1 ? "CRC" : "checksum"); }
};

/// The decoded picture hash in an SEI RBSP, if it holds one; throws DecodeError on damage.
std::optional<PictureHash> parse_sei_picture_hash(std::span<const std::uint8_t> rbsp,
                                                  int components);

/// Bit c set when component c of the picture differs from the hash; 0 when all match.
unsigned hash_mismatches(const PictureHash& h, const DecodedPicture& pic);

}  // namespace sigpu::hevc
