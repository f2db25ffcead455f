// The batch layout both decoders use: block descriptors, concatenated interleaver tables, and
// the checks every decode entry point runs on its input.
#pragma once

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/map_decoder.hpp"

namespace sigpu::turbo {

struct BatchPlan {
  std::vector<BlockDesc> blocks;
  std::vector<std::uint16_t> pi;   ///< one interleaver per distinct K, concatenated
  std::uint32_t total_subs = 0;    ///< sub-decoders over all blocks
  std::uint32_t total_bits = 0;    ///< sum of K
  std::uint32_t total_bounds = 0;  ///< sum of P + 1
  std::size_t total_llr = 0;
  int max_sub_len = 0;  ///< longest sub-block
};

/// Checks K (each one of the 188 sizes, at least one block), P and the LLR count; throws Error
/// naming the offending value.
BatchPlan make_plan(std::span<const int> K, int subdecoders, std::size_t llr_size);

/// Fixed-point LLRs of `bits` bits: 0 <= frac_bits < bits, else Error naming the value.
void check_frac_bits(int frac_bits, int bits);

/// Checks the options shared by every backend.
void check_options(const DecoderOptions& o);

/// Float LLRs must be finite (fixed-point ones always are). The error names the index, the
/// code block and the stream position.
void check_llrs(const BatchPlan& plan, std::span<const float> llr);
template <typename T>
void check_llrs(const BatchPlan&, std::span<const T>) {}

/// w[j] = the CRC (CRC24B or CRC24A) of a one followed by j zeros, j < n. The CRC is linear,
/// so the CRC of K bits is the XOR of w[K - 1 - k] over the bits k that are one: the GPU checks
/// a block this way with many threads at once.
std::vector<std::uint32_t> crc24_weights(int n, BlockCrc crc);

/// Extrinsic scaling in 1/16 steps for the fixed-point decoders.
inline int scale_q4(float scaling) {
  return static_cast<int>(std::lround(scaling * 16.0f));
}

}  // namespace sigpu::turbo
