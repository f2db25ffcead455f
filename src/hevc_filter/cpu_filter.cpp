// CPU drivers of the deblocking filter and SAO over host planes (see cpu_filter.hpp).
#include "hevc_filter/cpu_filter.hpp"

#include "hevc_filter/deblock.hpp"
#include "hevc_filter/sao.hpp"

namespace sigpu::hevc_filter {

namespace {

/// Filters one 4-line luma segment whose line 0 has q0 at `q0`.
void luma_segment(std::uint16_t* q0, std::ptrdiff_t across, std::ptrdiff_t along,
                  const EdgeParams& e, int max_value) {
  const LumaDecision d = decide_luma(q0, across, along, e.beta, e.tc);
  if (d.mode == 0) return;
  for (int k = 0; k < 4; ++k) filter_luma_line(q0 + k * along, across, d, e, max_value);
}

void chroma_segment(std::uint16_t* q0, std::ptrdiff_t across, std::ptrdiff_t along,
                    const EdgeParams& e, int max_value) {
  for (int k = 0; k < 4; ++k) filter_chroma_line(q0 + k * along, across, e, max_value);
}

}  // namespace

void deblock_vertical_unit(const Geometry& g, const SideInfo& s, const Planes& p, int j) {
  const std::ptrdiff_t ys = p.stride[0];
  const int ymax = (1 << g.bit_depth[0]) - 1;
  for (int half = 0; half < 2; ++half) {
    const int by = 2 * j + half;
    for (int x = 8; x < g.width; x += 8) {
      const EdgeParams e = segment_params(g, s, 0, x / 4, by, true);
      if (e.tc) luma_segment(p.data[0] + by * 4 * ys + x, 1, ys, e, ymax);
    }
  }
  for (int c = 1; c < g.planes; ++c) {
    const std::ptrdiff_t cs = p.stride[c];
    const int cmax = (1 << g.depth(c)) - 1;
    for (int x = 8; x < g.plane_width(c); x += 8) {
      const EdgeParams e = segment_params(g, s, c, x / 2, 2 * j, true);
      if (e.tc) chroma_segment(p.data[c] + 4 * j * cs + x, 1, cs, e, cmax);
    }
  }
}

void deblock_horizontal_unit(const Geometry& g, const SideInfo& s, const Planes& p, int j) {
  if (j == 0) return;
  const std::ptrdiff_t ys = p.stride[0];
  const int ymax = (1 << g.bit_depth[0]) - 1;
  for (int x = 0; x < g.width; x += 4) {
    const EdgeParams e = segment_params(g, s, 0, x / 4, 2 * j, false);
    if (e.tc) luma_segment(p.data[0] + 8 * j * ys + x, ys, 1, e, ymax);
  }
  if (j % 2) return;
  for (int c = 1; c < g.planes; ++c) {
    const std::ptrdiff_t cs = p.stride[c];
    const int cmax = (1 << g.depth(c)) - 1;
    for (int x = 0; x < g.plane_width(c); x += 4) {
      const EdgeParams e = segment_params(g, s, c, x / 2, 2 * j, false);
      if (e.tc) chroma_segment(p.data[c] + 4 * j * cs + x, cs, 1, e, cmax);
    }
  }
}

void sao_ctb_row(const Geometry& g, const SideInfo& s, int c, const std::uint16_t* src,
                 std::ptrdiff_t src_stride, std::uint16_t* dst, std::ptrdiff_t dst_stride,
                 int row) {
  const int sh = Geometry::shift(c);
  const int size = (1 << g.log2_ctb) >> sh;
  const int w = g.plane_width(c), h = g.plane_height(c), bd = g.depth(c);
  const int y0 = row * size, y1 = y0 + size < h ? y0 + size : h;
  for (int col = 0; col < g.ctbs_w; ++col) {
    const CtbParams& ctb = s.ctbs[row * g.ctbs_w + col];
    const int type = ctb.sao_type[c];
    if (!type) continue;
    const int x0 = col * size, x1 = x0 + size < w ? x0 + size : w;
    const std::uint32_t offsets = sao_pack(ctb.sao_offset[c]);
    if (type == 1) {
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
          if (!sao_exempt(g, s, ctb, c, x, y))
            dst[y * dst_stride + x] =
                std::uint16_t(sao_band(src[y * src_stride + x], ctb.sao_arg[c], offsets, bd));
      continue;
    }
    int dx = 0, dy = 0;
    sao_edge_neighbours(ctb.sao_arg[c], dx, dy);
    // Any sample: its neighbours are fetched only where they exist; sao_edge_sample then checks
    // picture, slice and tile boundaries.
    auto any_sample = [&](int x, int y) {
      const int xa = x + dx, ya = y + dy, xb = x - dx, yb = y - dy;
      if (xa < 0 || xb < 0 || xa >= w || xb >= w || ya < 0 || yb < 0 || ya >= h || yb >= h) return;
      if (sao_exempt(g, s, ctb, c, x, y)) return;
      dst[y * dst_stride + x] =
          std::uint16_t(sao_edge_sample(g, ctb, c, col, row, x, y, dx, dy, src[y * src_stride + x],
                                        src[ya * src_stride + xa], src[yb * src_stride + xb]));
    };
    for (int y = y0; y < y1; ++y) {
      if (ctb.no_filter || x1 - x0 < 3) {
        for (int x = x0; x < x1; ++x) any_sample(x, y);
        continue;
      }
      any_sample(x0, y);
      any_sample(x1 - 1, y);
      // Inner columns: both neighbours sit in this CTB's column, so the rows above and below
      // decide for all of them at once.
      if (!sao_neighbour_usable(g, ctb, col, row, (x0 + 1) << sh, (y + dy) << sh) ||
          !sao_neighbour_usable(g, ctb, col, row, (x0 + 1) << sh, (y - dy) << sh))
        continue;
      const std::uint16_t* in = src + y * src_stride;
      const std::uint16_t* a = src + (y + dy) * src_stride + dx;
      const std::uint16_t* b = src + (y - dy) * src_stride - dx;
      std::uint16_t* out = dst + y * dst_stride;
      for (int x = x0 + 1; x < x1 - 1; ++x)
        out[x] = std::uint16_t(sao_edge(in[x], a[x], b[x], offsets, bd));
    }
  }
}

}  // namespace sigpu::hevc_filter
