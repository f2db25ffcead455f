// Inputs of the intra stage's twin tests (test_intra_stage.cpp under the CPU emulation,
// test_intra_gpu.cpp on a device): random transform block records over random pictures, and the
// records of x265 streams' pictures with the decoder's reconstruction as the expected result.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hevc/intra_stage.hpp"
#include "hevc/records.hpp"

namespace sigpu::hevc::testing {

/// A picture's TU records, the planes the intra stage starts from and what it needs beside.
struct IntraCase {
  std::string name;
  TuRecords tu;
  IntraStageParams params;
  int planes = 3;
  int width[3] = {}, height[3] = {};
  bool constrained_intra_pred = false;  ///< the stream's PPS flag (stream cases)
  /// The picture before the stage: every other block's final samples, garbage in intra blocks.
  std::array<std::vector<std::uint16_t>, 3> start;
  std::array<std::vector<std::int16_t>, 3> residual;  ///< the residual stage's planes
  /// Stream cases: the decoder's (unfiltered) reconstruction. Empty for random cases.
  std::array<std::vector<std::uint16_t>, 3> want;

  std::size_t plane_size(int c) const { return std::size_t(width[c]) * height[c]; }
};

/// Random records over a random picture (default 128x64 luma samples, CTBs of 32): each plane
/// tiled in decoding order by transform blocks of every size, most intra with every mode, coded
/// or not, the rest inter (recorded when coded, or not at all); references available where
/// decoded before, some of them dropped (as slices, tiles and constrained intra prediction do);
/// residuals from small to the int16 extremes. 8, 10 or 12 bit by seed, 4:0:0 for seeds 3 mod
/// 4, reference filtering and strong smoothing on or off.
IntraCase random_intra_case(std::uint64_t seed, int width = 128, int height = 64);

/// The first picture (intra) of all-intra streams and an inter picture of inter streams of
/// streams.hpp with intra blocks among inter ones: 8, 10 and 12 bit, CTU 16/32/64, 4:0:0,
/// strong smoothing off, lossless CUs, transform skip, constrained intra prediction, slices.
/// Those cached or made here: none without the cache (or the GPU machine's bundle) and without
/// x265 and FFmpeg.
std::vector<IntraCase> intra_stream_cases();

/// intra_stage_cpu's planes from the case's start.
std::array<std::vector<std::uint16_t>, 3> cpu_intra(const IntraCase& c, const IntraOrder& order);

/// The case's order (order_intra_tus).
IntraOrder intra_order(const IntraCase& c);

}  // namespace sigpu::hevc::testing
