// A writer of synthetic HEVC streams whose every CU is PCM, for the paths x265 never writes:
// PCM (sample bit depths, alignment after the terminate bin), tiles, WPP with dependent slice
// segments and entry points. The expected output is known exactly: the PCM samples, shifted
// to the coded bit depth, untouched by the filters when pcm_loop_filter_disabled_flag is set.
#pragma once

#include <cstdint>
#include <vector>

namespace sigpu::hevc::testing {

struct PcmStreamConfig {
  int width = 128, height = 64;  ///< multiples of 32 (CTB 32 = one PCM CU)
  int bit_depth = 8;
  int pcm_bits_luma = 8, pcm_bits_chroma = 8;
  int tile_cols = 1, tile_rows = 1;  ///< uniform spacing; 1x1: no tiles
  bool wpp = false;
  int dependent_from_ctb = -1;  ///< raster CTB address where a dependent slice segment starts
  bool deblocking = false;      ///< deblocking enabled, with pcm_loop_filter_disabled_flag = 1
  unsigned seed = 1;
};

struct PcmStream {
  std::vector<std::uint8_t> bytes;         ///< Annex B: SPS, PPS, slice segment(s)
  std::vector<std::uint16_t> expected[3];  ///< decoded planes
};

PcmStream make_pcm_stream(const PcmStreamConfig& c);

}  // namespace sigpu::hevc::testing
