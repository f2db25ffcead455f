// Inputs of the inter prediction stage's twin tests (test_inter_stage.cpp under the CPU
// emulation, test_inter_gpu.cpp on a device): random PU records over random reference pictures
// and the records of x265 streams' inter pictures, with the CPU twin's prediction and the
// decoder's block filters' prediction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hevc/inter_sample.hpp"
#include "hevc/records.hpp"

namespace sigpu::hevc::testing {

/// A picture's PU records and what the inter stage needs beside them.
struct InterCase {
  std::string name;
  PuRecords pu;
  std::vector<InterSlice> slices;
  InterParams params;
  int planes = 3;
  int width[3] = {}, height[3] = {};  ///< of the current and every reference picture
  std::vector<std::array<std::vector<std::uint16_t>, 3>> refs;  ///< each reference's planes

  std::size_t plane_size(int c) const { return std::size_t(width[c]) * height[c]; }
  /// The reference table over `refs` (pointing into this case: valid while it lives unmoved).
  std::vector<RefPicture> ref_table() const;
};

/// Random records over a 192x128 picture tiled by CUs of 8 to 64 samples, each split into PUs
/// by a random PartMode (AMP included): every fractional position, motion vectors from small
/// to pointing far outside the picture, uni-prediction from either list and bi-prediction,
/// three slices (one with default weighting, two with random explicit weights and offsets),
/// three random reference pictures; 8 or 10 bit by seed, 4:0:0 for seeds 3 mod 4. Other sizes
/// (multiples of 64) for timing.
InterCase random_inter_case(std::uint64_t seed, int width = 192, int height = 128);

/// The records of an inter picture (the second, P, or the third, B, both predicting from the
/// first) of x265 streams of streams.hpp: P and B slices, bi-prediction, explicit weights uni
/// and bi, AMP, several slices, 10 bit, an odd picture size. Those cached or made here: none
/// without the cache (or the GPU machine's bundle) and without x265 and FFmpeg.
std::vector<InterCase> inter_stream_cases();

/// inter_stage_cpu's planes, every sample first twin::poisoned (as the kernel's outputs).
std::vector<std::vector<std::uint16_t>> cpu_prediction(const InterCase& c);

/// The same PUs predicted by the decoder's block filters (interpolate and weighted_prediction
/// of inter_pred.hpp, as the slice decoder calls them), into poisoned planes.
std::vector<std::vector<std::uint16_t>> block_prediction(const InterCase& c);

}  // namespace sigpu::hevc::testing
