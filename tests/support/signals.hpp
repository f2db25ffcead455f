// Deterministic test signals for any channel count (1..8) and bit depth (4..32).
// All return interleaved int32 samples inside the signed `bps` range; the same arguments
// always give the same samples (own PRNG, no std:: distributions).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace sigpu::test {

enum class Signal {
  music,        ///< harmonic notes with envelopes, stereo spread, noise bursts; about -6 dBFS
  white_noise,  ///< uniform over the full range
  silence,      ///< all zeros
  square,       ///< full-scale squares (the range's extremes), channels out of phase
  adversarial,  ///< bytes full of frame syncs and valid frames, see make_adversarial()
  wasted_bits,  ///< music with its low bits zero (shift varies over time), for wasted-bits coding
};

std::string_view to_string(Signal s);

/// `frames` samples per channel.
std::vector<std::int32_t> make_signal(Signal kind, unsigned channels, unsigned bps,
                                      std::size_t frames, std::uint64_t seed = 1);

/// Where the fake frame headers inside an adversarial signal should look plausible: the
/// parameters of the stream the signal will be encoded into.
struct AdversarialParams {
  std::uint32_t sample_rate = 44100;
  std::uint32_t block_size = 4096;  ///< of the outer stream; sets the frame numbers used
  bool variable_blocksize = false;
};

/// A signal whose bit pattern (when coded VERBATIM, bps bits per sample MSB first, as FLAC
/// does) is a byte stream full of 0xFF 0xF8 / 0xFF 0xF9 pairs, frame headers with correct
/// CRC-8 and frame numbers near the outer frame's, and complete valid frames (CRC-16 good)
/// with the outer stream's parameters. Random filler keeps encoders from compressing it.
std::vector<std::int32_t> make_adversarial(unsigned channels, unsigned bps, std::size_t frames,
                                           const AdversarialParams& params = {},
                                           std::uint64_t seed = 1);

/// Packs arbitrary bytes (e.g. a real encoded FLAC stream) into samples: the bytes are
/// read as one bit stream, `bps` bits per sample, MSB first, so a VERBATIM subframe of these
/// samples reproduces the bytes. The byte stream is repeated to fill `frames` x `channels`.
std::vector<std::int32_t> samples_from_bytes(std::span<const std::uint8_t> bytes, unsigned channels,
                                             unsigned bps, std::size_t frames);

}  // namespace sigpu::test
