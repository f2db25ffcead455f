// Sample adaptive offset (H.265 8.7.3), written once for the CPU drivers and the CUDA kernel:
// the band and edge offset of one sample from its value (and its neighbours' values), and the
// checks that leave a sample alone (pcm / bypass, a neighbour outside the picture or behind a
// closed slice or tile boundary). The drivers read the deblocked picture, never SAO's output.
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "hevc_filter/picture.hpp"
#include "hevc_filter/tables.hpp"

namespace sigpu::hevc_filter {

/// Offsets (dx, dy) of the first neighbour each edge class compares; the second is (-dx, -dy).
/// Class 0 horizontal, 1 vertical, 2 135 degrees (up-left), 3 45 degrees (up-right).
SIGPU_HD inline void sao_edge_neighbours(int eo_class, int& dx, int& dy) {
  dx = eo_class == 1 ? 0 : (eo_class == 3 ? 1 : -1);
  dy = eo_class == 0 ? 0 : -1;
}

SIGPU_HD inline int sign3(int v) {
  return (v > 0) - (v < 0);
}

/// SaoOffsetVal[1..4] packed one signed byte each, so that a per-sample lookup needs no
/// indexed array (which CUDA would put in local memory).
SIGPU_HD inline std::uint32_t sao_pack(const std::int8_t* offset) {
  return std::uint32_t(std::uint8_t(offset[0])) | std::uint32_t(std::uint8_t(offset[1])) << 8 |
         std::uint32_t(std::uint8_t(offset[2])) << 16 |
         std::uint32_t(std::uint8_t(offset[3])) << 24;
}
SIGPU_HD inline int sao_unpack(std::uint32_t packed, int k) {
  return std::int8_t(std::uint8_t(packed >> (8 * k)));
}

/// Band offset: bandTable maps the 4 bands from sao_band_position on to SaoOffsetVal[1..4].
SIGPU_HD inline int sao_band(int v, int band_position, std::uint32_t offsets, int bit_depth) {
  const int k = ((v >> (bit_depth - 5)) - band_position) & 31;
  return clip3(0, (1 << bit_depth) - 1, v + (k < 4 ? sao_unpack(offsets, k) : 0));
}

/// Edge offset of v between its neighbours a and b: edgeIdx = 2 + Sign(v - a) + Sign(v - b),
/// then 0, 1, 2 become 1, 2, 0 (a local minimum is category 1, a maximum 4). Branch-free: edgeIdx
/// 2 adds 0.
SIGPU_HD inline int sao_edge(int v, int a, int b, std::uint32_t offsets, int bit_depth) {
  const int e = 2 + sign3(v - a) + sign3(v - b);
  const int add = e == 2 ? 0 : sao_unpack(offsets, e < 2 ? e : e - 1);
  return clip3(0, (1 << bit_depth) - 1, v + add);
}

/// May SAO at a sample of the CTB at (ctb_x, ctb_y) read the sample at luma position (nx, ny)?
SIGPU_HD inline bool sao_neighbour_usable(const Geometry& g, const CtbParams& ctb, int ctb_x,
                                          int ctb_y, int nx, int ny) {
  if (nx < 0 || ny < 0 || nx >= g.width || ny >= g.height) return false;
  const int dx = (nx >> g.log2_ctb) - ctb_x, dy = (ny >> g.log2_ctb) - ctb_y;
  return (dx == 0 && dy == 0) || (ctb.sao_open & sao_open_bit(dx, dy));
}

/// Is the sample (x, y) of component c in a pcm / bypass block (left untouched)?
SIGPU_HD inline bool sao_exempt(const Geometry& g, const SideInfo& s, const CtbParams& ctb, int c,
                                int x, int y) {
  const int sh = Geometry::shift(c);
  return ctb.no_filter &&
         (s.blocks[((y << sh) >> 2) * g.blocks_w + ((x << sh) >> 2)].flags & kNoFilter);
}

/// The SAO output of an edge-offset sample v at (x, y) of component c, with its class's two
/// neighbours a (at (x + dx, y + dy)) and b (at (x - dx, y - dy)).
SIGPU_HD inline int sao_edge_sample(const Geometry& g, const CtbParams& ctb, int c, int ctb_x,
                                    int ctb_y, int x, int y, int dx, int dy, int v, int a, int b) {
  const int sh = Geometry::shift(c);
  if (!sao_neighbour_usable(g, ctb, ctb_x, ctb_y, (x + dx) << sh, (y + dy) << sh) ||
      !sao_neighbour_usable(g, ctb, ctb_x, ctb_y, (x - dx) << sh, (y - dy) << sh))
    return v;
  return sao_edge(v, a, b, sao_pack(ctb.sao_offset[c]), g.depth(c));
}

}  // namespace sigpu::hevc_filter
