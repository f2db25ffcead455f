// Inputs of the residual stage's twin tests (test_residual_stage.cpp under the CPU emulation,
// test_residual_gpu.cpp on a device): random transform block records and the records of x265
// streams' pictures, with the CPU twin's residual planes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hevc/parameter_sets.hpp"
#include "hevc/records.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc::testing {

/// A picture's records and what the residual stage needs beside them.
struct ResidualCase {
  std::string name;
  PictureRecords rec;
  int bit_depth[2] = {8, 8};
  bool scaling_on = false;
  ScalingFactors scaling;
  int planes = 3;
  int width[3] = {}, height[3] = {};

  /// The stage's parameters (pointing into this case: valid while it lives unmoved).
  ResidualParams params() const;
  std::size_t plane_size(int c) const { return std::size_t(width[c]) * height[c]; }
};

/// Random 4:2:0 records over a picture of 128x128 luma samples: each plane tiled by transform
/// blocks of every size, most coded, intra and inter, transform skip at every size, bypass,
/// every qP of the bit depth, levels from small to the 16-bit extremes, sparse and dense; luma
/// and chroma bit depths of 8, 10 or 12 by seed; scaling lists (random factors) on for odd seeds.
ResidualCase random_case(std::uint64_t seed);

/// The records of the first picture (intra) or the second (inter) of x265 streams of
/// streams.hpp: 8 to 12 bits, transform skip, lossless CUs, scaling lists, extreme QPs, mono.
/// Those cached or made here: none without the cache (or the GPU machine's bundle) and without
/// x265 and FFmpeg.
std::vector<ResidualCase> stream_cases();

/// residual_stage_cpu's planes, every sample first twin::poisoned (as the kernel's outputs).
std::vector<std::vector<std::int16_t>> cpu_residual(const ResidualCase& c);

}  // namespace sigpu::hevc::testing
