// The CPU drivers: they walk the picture in units that are independent of each other, so the
// serial reference and the parallel backend run the same code in a different order.
//
// Deblocking unit j ("edge row"): the vertical edges of luma rows 8j..8j+7 and chroma rows
// 4j..4j+3 (a 4-row chroma segment takes its bS from luma row 8j, 8.7.2.5.5); the horizontal
// edges at luma row 8j and, for even j, at chroma row 4j. Vertical edges sit 8 samples apart and
// change at most 3 samples on each side, horizontal edge rows likewise, so units of one
// direction never touch the same sample; all vertical units run before any horizontal one.
#pragma once

#include <sigpu/hevc_filter.hpp>

#include "hevc_filter/picture.hpp"

namespace sigpu::hevc_filter {

/// Number of deblocking units (height / 8).
inline int edge_rows(const Geometry& g) {
  return g.height / 8;
}
void deblock_vertical_unit(const Geometry& g, const SideInfo& s, const Planes& p, int j);
/// Unit 0 has no horizontal edge (the picture's top).
void deblock_horizontal_unit(const Geometry& g, const SideInfo& s, const Planes& p, int j);

/// SAO of CTB row `row` of component c: reads the deblocked copy `src`, writes `dst` where SAO
/// changes a sample (dst already holds the deblocked picture).
void sao_ctb_row(const Geometry& g, const SideInfo& s, int c, const std::uint16_t* src,
                 std::ptrdiff_t src_stride, std::uint16_t* dst, std::ptrdiff_t dst_stride, int row);

/// out[x] = sao_edge(in[x], a[x], b[x], offsets, bit_depth) for x < n: 16 at a time with AVX2
/// where the CPU has it (bit depths up to 15), sao_edge itself being its plain twin.
void sao_edge_row(const std::uint16_t* in, const std::uint16_t* a, const std::uint16_t* b,
                  std::uint16_t* out, int n, std::uint32_t offsets, int bit_depth);

}  // namespace sigpu::hevc_filter
