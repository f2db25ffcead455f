// A small, readable FLAC encoder for streams that packaged encoders do not make:
// variable block sizes (blocking strategy 1, sample numbers in the frame headers), block
// sizes anywhere in 16..65535, escaped (raw) Rice partitions, wasted bits, and 32-bit
// stereo coded as left/side so that the side channel needs 33 bits.
//
// Subframes are CONSTANT, VERBATIM or FIXED (orders 0..4) with Rice/Rice2 residuals; the
// encoder picks the smallest unless told otherwise. STREAMINFO carries the MD5 of the input.
// It is written independently of the decoder under test (own CRCs, own bit writer).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sigpu::test {

enum class VarSubframes {
  best,      ///< CONSTANT when possible, else the smallest of VERBATIM and FIXED 0..4
  verbatim,  ///< VERBATIM only (keeps the input's bytes visible in the stream)
  fixed,     ///< FIXED (order chosen) unless the residual does not fit 32 bits
};

enum class VarStereo {
  independent,
  left_side,
  side_right,
  mid_side,
  cycle,  ///< a different mode for every frame (stereo only)
};

struct VarEncoderOptions {
  std::uint32_t sample_rate = 44100;
  std::uint32_t channels = 2;
  std::uint32_t bits_per_sample = 16;
  bool variable_blocksize = true;          ///< blocking strategy bit 1, sample numbers in headers
  std::uint32_t min_block = 16;            ///< pseudo-random block sizes in [min_block, max_block],
  std::uint32_t max_block = 65535;         ///< log-uniform (many small blocks, some large)
  std::uint32_t fixed_block = 4096;        ///< used when variable_blocksize is false
  std::vector<std::uint32_t> block_sizes;  ///< explicit sizes (cycled); overrides the above
  std::uint64_t seed = 1;
  VarSubframes subframes = VarSubframes::best;
  VarStereo stereo = VarStereo::independent;
  unsigned max_partition_order = 8;
  bool use_escape_partitions = true;  ///< raw-bits partitions when they are smaller
  bool detect_wasted_bits = true;
  bool md5 = true;
  bool header_sample_rate = true;      ///< code the rate in frame headers when possible
  bool header_bits_per_sample = true;  ///< code bps in frame headers when a code exists
};

/// Encodes interleaved samples (each within the signed `bits_per_sample` range) to a
/// complete FLAC file ("fLaC" + STREAMINFO + frames). Throws std::invalid_argument on
/// unsupported parameters.
std::vector<std::uint8_t> var_encode(std::span<const std::int32_t> interleaved,
                                     const VarEncoderOptions& options);

/// The pieces, for tests and signals that build streams or fake frames by hand.
namespace flacbits {
std::uint8_t crc8(const std::uint8_t* p, std::size_t n);
std::uint16_t crc16(const std::uint8_t* p, std::size_t n);

/// One complete frame from planar channel data (no stereo decorrelation):
/// `number` is the frame number (fixed) or first sample number (variable).
std::vector<std::uint8_t> encode_frame(const std::vector<std::vector<std::int64_t>>& channels,
                                       std::uint32_t bits_per_sample, std::uint32_t sample_rate,
                                       bool variable_blocksize, std::uint64_t number,
                                       VarSubframes subframes = VarSubframes::best);
/// A frame of CONSTANT subframes (one value per channel), cheap at any block size.
std::vector<std::uint8_t> encode_constant_frame(const std::vector<std::int64_t>& values,
                                                std::uint32_t block_size,
                                                std::uint32_t bits_per_sample,
                                                std::uint32_t sample_rate, bool variable_blocksize,
                                                std::uint64_t number);
}  // namespace flacbits

}  // namespace sigpu::test
