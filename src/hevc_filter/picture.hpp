// What the filter drivers (CPU and CUDA) read about a picture, flattened from PictureInfo into
// plain structs that a kernel can take by value or from device memory: the picture geometry,
// and one CtbParams per CTB with the slice fields already resolved (which slice, its deblocking
// offsets, its across-slices flag, its SAO flags folded into the SAO types).
#pragma once

#include <cstdint>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "core/hd.hpp"

namespace sigpu::hevc_filter {

struct Geometry {
  int width = 0, height = 0;  ///< luma samples
  int blocks_w = 0;           ///< 4x4 blocks per row (width / 4)
  int log2_ctb = 4;
  int ctbs_w = 0, ctbs_h = 0;
  int planes = 3;                ///< 1 monochrome, 3 for 4:2:0
  int bit_depth[3] = {8, 8, 8};  ///< per component
  int chroma_qp_offset[3] = {};  ///< 0, pps_cb_qp_offset, pps_cr_qp_offset
  bool deblocking = true;
  bool sao = false;  ///< sample_adaptive_offset_enabled_flag and at least one CTB has SAO on
  bool across_tiles = true;

  /// Plane size of component c (4:2:0 chroma halves both).
  SIGPU_HD int plane_width(int c) const { return c ? width >> 1 : width; }
  SIGPU_HD int plane_height(int c) const { return c ? height >> 1 : height; }
  /// log2 of the luma samples per sample of component c along each axis.
  SIGPU_HD static int shift(int c) { return c ? 1 : 0; }
  /// bit_depth[c] and chroma_qp_offset[c] by selects: a kernel indexing a parameter array with a
  /// run-time c would copy the whole struct to local memory.
  SIGPU_HD int depth(int c) const {
    return c == 0 ? bit_depth[0] : (c == 1 ? bit_depth[1] : bit_depth[2]);
  }
  SIGPU_HD int qp_offset(int c) const {
    return c == 1 ? chroma_qp_offset[1] : (c == 2 ? chroma_qp_offset[2] : 0);
  }
  SIGPU_HD int ctb_at(int luma_x, int luma_y) const {
    return (luma_y >> log2_ctb) * ctbs_w + (luma_x >> log2_ctb);
  }
};

/// Bit of CtbParams::sao_open for the neighbouring CTB at (dx, dy), each -1..1.
SIGPU_HD inline int sao_open_bit(int dx, int dy) {
  return 1 << ((dy + 1) * 3 + dx + 1);
}

/// One CTB's filter parameters (28 bytes, the SAO offsets first so they load as one word).
struct alignas(4) CtbParams {
  std::int8_t sao_offset[3][4] = {};  ///< SaoOffsetVal[1..4] per component
  std::uint16_t slice = 0, tile = 0;
  std::int8_t beta_offset_div2 = 0, tc_offset_div2 = 0;
  std::uint8_t sao_type[3] = {};  ///< 0 off (also when the slice's SAO flag for it is 0), 1 band,
                                  ///< 2 edge
  std::uint8_t sao_arg[3] = {};   ///< band position or edge class
  /// sao_open_bit()s of the neighbouring CTBs whose samples SAO may read from this CTB: inside
  /// the picture, and not behind a slice or tile boundary that the flags close (8.7.3).
  std::uint16_t sao_open = 0;
  std::uint8_t no_filter = 0;  ///< some 4x4 block of the CTB has kNoFilter
};
static_assert(sizeof(CtbParams) <= 32);

/// The side information the drivers read, by pointer (host or device memory).
struct SideInfo {
  const BlockInfo* blocks = nullptr;
  const Motion* motion = nullptr;  ///< null for intra pictures
  const CtbParams* ctbs = nullptr;
};

/// Validates `info` (throws Error) and flattens it.
Geometry make_geometry(const PictureInfo& info);
std::vector<CtbParams> make_ctb_params(const PictureInfo& info, const Geometry& g);
/// Throws Error (naming `where`) unless every plane of g has data and a stride >= its width.
void check_planes(const Geometry& g, const Planes& p, const char* where);

}  // namespace sigpu::hevc_filter
