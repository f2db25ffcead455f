// Small hand-made pictures for the tests that check single samples against the spec's
// equations worked out by hand.
#pragma once

#include <cstdint>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "hevc_filter/test_picture.hpp"

namespace sigpu::test {

struct SmallPicture : TestPicture {
  /// A w x h picture, one slice, one tile, every 4x4 block inter with no edges and QP `qp`,
  /// every sample `fill`.
  SmallPicture(int w, int h, int qp, bool monochrome = true, int bit_depth = 8,
               std::uint16_t fill = 128) {
    info.width = w;
    info.height = h;
    info.bit_depth_luma = info.bit_depth_chroma = bit_depth;
    info.chroma_format_idc = monochrome ? 0 : 1;
    info.log2_ctb_size = 4;
    info.blocks.assign(std::size_t(w / 4) * (h / 4), {});
    for (auto& b : info.blocks) b.qp_y = std::int8_t(qp);
    info.slices.resize(1);
    for (int c = 0; c < (monochrome ? 1 : 3); ++c)
      samples[c].assign(std::size_t(c ? w / 2 : w) * (c ? h / 2 : h), fill);
  }

  /// A filtered vertical edge at luma column x over luma rows [y0, y1): TU and PU edge, open.
  void vertical_edge(int x, int y0, int y1, std::uint8_t extra_flags = hevc_filter::kIntra) {
    for (int y = y0; y < y1; y += 4) {
      block(x, y).flags |= hevc_filter::kLeftTuEdge | hevc_filter::kLeftPuEdge | extra_flags;
      block(x, y).deblock |= hevc_filter::kFilterLeft;
    }
  }
  void horizontal_edge(int y, int x0, int x1, std::uint8_t extra_flags = hevc_filter::kIntra) {
    for (int x = x0; x < x1; x += 4) {
      block(x, y).flags |= hevc_filter::kTopTuEdge | hevc_filter::kTopPuEdge | extra_flags;
      block(x, y).deblock |= hevc_filter::kFilterTop;
    }
  }
};

}  // namespace sigpu::test
