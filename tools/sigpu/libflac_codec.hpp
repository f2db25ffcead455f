// In-memory FLAC encoding and decoding with libFLAC, for the demo: libFLAC makes the demo's
// input (so sigpu is checked against an encoder it did not write) and is the speed reference.
#pragma once

#ifdef SIGPU_HAVE_LIBFLAC

#include <cstdint>
#include <span>
#include <vector>

namespace sigpu::cli {

/// Encodes interleaved samples; the result has STREAMINFO with the MD5 filled in.
std::vector<std::uint8_t> libflac_encode(std::span<const std::int32_t> interleaved,
                                         unsigned channels, unsigned bits, unsigned sample_rate,
                                         unsigned level);

struct LibflacDecoded {
  std::vector<std::int32_t> samples;  ///< interleaved
  bool md5_ok = false;
};
/// Decodes with MD5 checking on. Throws Error when libFLAC reports an error.
LibflacDecoded libflac_decode(std::span<const std::uint8_t> file, std::size_t expected_samples);

}  // namespace sigpu::cli

#endif
