// The MD5 that STREAMINFO stores: of the coded integers, interleaved, little-endian, each in
// (bps + 7) / 8 bytes.
#pragma once

#include <array>
#include <cstdint>

#include <sigpu/flac.hpp>

namespace sigpu::flac {

/// Precondition: the Pcm's format is lossless for its bit depth (see lossless_for).
std::array<std::uint8_t, 16> pcm_md5(const Pcm& pcm);

}  // namespace sigpu::flac
