// libFLAC as the oracle: decode FLAC bytes held in memory with FLAC__stream_decoder, and
// encode samples to FLAC bytes with FLAC__stream_encoder. Used by the tests and by the
// benchmarks, so it has no GoogleTest dependency.
//
// The implementation needs libFLAC: it is compiled in when SIGPU_HAVE_LIBFLAC is defined
// (the test target defines it when pkg-config finds flac; a benchmark that links
// PkgConfig::FLAC must define it too). Without it `libflac_available()` is false and the
// functions throw std::runtime_error.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sigpu::test {

bool libflac_available();

enum class OracleMd5 { match, mismatch, not_set };

struct OracleDecoded {
  std::vector<std::int32_t> samples;  ///< interleaved, the coded integers (raw32)
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  std::uint64_t total_samples = 0;    ///< from STREAMINFO, 0 = unknown
  std::uint64_t decoded_samples = 0;  ///< per channel, what the frames gave
  std::uint64_t frames = 0;
  std::uint32_t min_block = 0, max_block = 0;  ///< of the frames decoded
  OracleMd5 md5 = OracleMd5::not_set;
  std::vector<std::string> errors;  ///< from the error callback and bad end states
  bool ok() const { return errors.empty() && md5 != OracleMd5::mismatch; }
};

/// Decodes a complete FLAC stream from memory. Never throws on bad data: problems are
/// listed in `errors` (libFLAC's own wording, with the frame count at the time).
OracleDecoded decode_with_libflac(std::span<const std::uint8_t> bytes);

struct LibflacEncoderOptions {
  unsigned level = 5;                     ///< compression level 0..8, applied first
  unsigned blocksize = 0;                 ///< 0: the level's default
  int max_lpc_order = -1;                 ///< -1: the level's default; 0 disables LPC
  int qlp_coeff_precision = -1;           ///< -1: the level's default; 0: automatic; else 5..15
  int min_residual_partition_order = -1;  ///< -1: the level's default
  int max_residual_partition_order = -1;  ///< -1: the level's default; up to 15
  int exhaustive_model_search = -1;       ///< -1: level default, 0/1 to set
  int mid_side = -1;                      ///< -1: level default, 0/1: do_mid_side_stereo
  bool verify = false;                    ///< libFLAC's own verify decoder
  bool do_md5 = true;
  int streamable_subset = -1;  ///< -1: auto (off when the settings need --lax), 0/1 to set
  std::string apodization;     ///< empty: the level's default
  bool disable_constant_subframes = false;  ///< libFLAC's testing switches (flac's
  bool disable_fixed_subframes = false;     ///< --disable-*-subframes): force LPC or
  bool disable_verbatim_subframes = false;  ///< VERBATIM coding
};

/// Encodes interleaved samples (each within the signed `bps` range) to FLAC bytes,
/// STREAMINFO rewritten at the end (MD5, total samples, frame sizes). Throws
/// std::runtime_error with libFLAC's state string when the encoder refuses.
std::vector<std::uint8_t> encode_with_libflac(std::span<const std::int32_t> interleaved,
                                              unsigned channels, unsigned bps, unsigned sample_rate,
                                              const LibflacEncoderOptions& options = {});

}  // namespace sigpu::test
