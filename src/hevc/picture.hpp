// A picture under reconstruction: sample planes, the per-4x4 state that parsing and prediction
// of later blocks read (intra modes, coding-tree depth, QP), and the filters' side information.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "hevc/parameter_sets.hpp"

namespace sigpu::hevc {

struct DecodedPicture {
  std::shared_ptr<const Sps> sps;
  std::shared_ptr<const Pps> pps;  ///< the PPS of the first slice (geometry, QP offsets)
  std::vector<std::uint16_t> planes[3];
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

  void allocate(std::shared_ptr<const Sps> s, std::shared_ptr<const Pps> p);
  std::size_t block(int x, int y) const {  ///< 4x4 index of luma sample (x, y)
    return static_cast<std::size_t>(y >> 2) * blocks_w + (x >> 2);
  }
};

}  // namespace sigpu::hevc
