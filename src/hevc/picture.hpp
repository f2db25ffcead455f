// A picture under reconstruction: sample planes, the per-4x4 state that parsing and prediction
// of later blocks read (intra modes, coding-tree depth, QP), and the filters' side information.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "hevc/parameter_sets.hpp"
#include "hevc/plane_pool.hpp"

namespace sigpu::hevc {

struct DecodedPicture {
  std::shared_ptr<const Sps> sps;
  std::shared_ptr<const Pps> pps;     ///< the PPS of the first slice (geometry, QP offsets)
  std::unique_ptr<PlaneStore> store;  ///< holds the planes
  std::span<std::uint16_t> planes[3];
  int width[3] = {}, height[3] = {};     ///< plane sizes (full decoded picture, not cropped)
  int blocks_w = 0, blocks_h = 0;        ///< 4x4 luma blocks per row / column
  std::vector<std::uint8_t> intra_mode;  ///< IntraPredModeY per 4x4 block
  std::vector<std::uint8_t> ct_depth;    ///< CtDepth per 4x4 block
  std::vector<std::uint8_t> pcm;         ///< pcm_flag per 4x4 block (DC for mode prediction)
  std::vector<int> ctb_slice_addr;       ///< SliceAddrRs per CTB, -1 until decoded
  hevc_filter::PictureInfo info;
  int poc = 0;
  std::size_t decode_index = 0;
  bool output = true;
  int decoded_ctbs = 0;
  bool damaged = false;  ///< some slice failed: CTBs may be missing

  /// Samples of all planes of a picture of `s` (the size of the PlaneStore allocate() takes).
  static std::size_t samples(const Sps& s);
  /// Starts a picture (a new object or one recycled from an earlier picture): sets the
  /// parameter sets, empties info.slices, which fills as slices are parsed (on the parsing
  /// thread).
  void start(std::shared_ptr<const Sps> s, std::shared_ptr<const Pps> p);
  /// Lays the planes out in `storage` (samples(*sps) samples) and sizes the per-block state (on
  /// the thread that reconstructs the picture).
  void allocate(std::unique_ptr<PlaneStore> storage);
  std::size_t block(int x, int y) const {  ///< 4x4 index of luma sample (x, y)
    return static_cast<std::size_t>(y >> 2) * blocks_w + (x >> 2);
  }
};

}  // namespace sigpu::hevc
