// ProRes constant tables (RDD 36 tables 7-11): scan orders and the adaptive codebooks.
// The codebook tables are packed into integer constants so that host and device code read them
// without a memory table.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::prores {

/// Raster position of the i-th coefficient in coding order.
inline constexpr std::uint8_t kProgressiveScan[64] = {
    0,  1,  8,  9,  2,  3,  10, 11, 16, 17, 24, 25, 18, 19, 26, 27, 4,  5,  12, 20, 13, 6,
    7,  14, 21, 28, 29, 22, 15, 23, 30, 31, 32, 33, 40, 48, 41, 34, 35, 42, 49, 56, 57, 50,
    43, 36, 37, 44, 51, 58, 59, 52, 45, 38, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63};
inline constexpr std::uint8_t kInterlacedScan[64] = {
    0,  8,  1,  9,  16, 24, 17, 25, 2,  10, 3,  11, 18, 26, 19, 27, 32, 40, 33, 34, 41, 48,
    56, 49, 42, 35, 43, 50, 57, 58, 51, 59, 4,  12, 5,  6,  13, 20, 28, 21, 14, 7,  15, 22,
    29, 36, 44, 37, 30, 23, 31, 38, 45, 52, 60, 53, 46, 39, 47, 54, 61, 62, 55, 63};

/// A codebook byte: bits 7-5 Rice order, 4-2 exp-Golomb order, 1-0 switch bits.
inline constexpr unsigned kFirstDcCodebook = 0xB8;

/// DC codebook chosen by the previous DC code (clamped to 6).
SIGPU_HD SIGPU_FORCEINLINE unsigned dc_codebook(unsigned prev_code) {
  constexpr std::uint64_t kTable = 0x0070704D4D282804ull;  // {04 28 28 4D 4D 70 70}
  return static_cast<unsigned>(kTable >> (8 * (prev_code < 6 ? prev_code : 6))) & 0xFF;
}

/// AC run codebook chosen by the previous run (clamped to 15).
SIGPU_HD SIGPU_FORCEINLINE unsigned run_codebook(unsigned prev_run) {
  constexpr std::uint64_t kLow = 0x2929290405050606ull;   // runs 0-7
  constexpr std::uint64_t kHigh = 0x4C28282828282829ull;  // runs 8-15
  const unsigned r = prev_run < 15 ? prev_run : 15;
  return static_cast<unsigned>((r < 8 ? kLow : kHigh) >> (8 * (r & 7))) & 0xFF;
}

/// AC level codebook chosen by the previous level (clamped to 9).
SIGPU_HD SIGPU_FORCEINLINE unsigned level_codebook(unsigned prev_level) {
  constexpr std::uint64_t kLow = 0x2828280406050A04ull;  // levels 0-7
  const unsigned l = prev_level < 9 ? prev_level : 9;
  if (l >= 8) return l == 8 ? 0x28 : 0x4C;
  return static_cast<unsigned>(kLow >> (8 * l)) & 0xFF;
}

}  // namespace sigpu::prores
