// Validation of PictureInfo and its flattening into Geometry and CtbParams.
#include "hevc_filter/picture.hpp"

#include <string>

namespace sigpu::hevc_filter {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw Error("hevc_filter: invalid PictureInfo: " + what);
}

void check_size(std::size_t have, std::size_t want, const char* name) {
  if (have != want)
    fail(std::string(name) + " has " + std::to_string(have) + " entries, expected " +
         std::to_string(want));
}

// A fast pass (no branches per block) first; only a picture that fails it is walked again
// to name the first bad block.
void check_blocks(const PictureInfo& info, int blocks_w, int blocks_h) {
  const int min_qp = -6 * (info.bit_depth_luma - 8);
  bool bad = false;
  for (const BlockInfo& b : info.blocks)
    bad |= (b.qp_y < min_qp) | (b.qp_y > 51) | ((b.deblock & ~(kFilterLeft | kFilterTop)) != 0) |
           ((b.flags & 0x80) != 0);
  for (int by = 0; by < blocks_h; ++by)
    bad |= (info.blocks[std::size_t(by) * blocks_w].deblock & kFilterLeft) != 0;
  for (int bx = 0; bx < blocks_w; ++bx)
    bad |= (info.blocks[std::size_t(bx)].deblock & kFilterTop) != 0;
  if (!bad) return;
  for (int by = 0; by < blocks_h; ++by) {
    for (int bx = 0; bx < blocks_w; ++bx) {
      const BlockInfo& b = info.blocks[std::size_t(by) * blocks_w + bx];
      auto at = [&] {
        return "blocks[" + std::to_string(by * blocks_w + bx) + "] (x " + std::to_string(bx * 4) +
               ", y " + std::to_string(by * 4) + ")";
      };
      if (b.qp_y < min_qp || b.qp_y > 51)
        fail(at() + ": qp_y " + std::to_string(b.qp_y) + " outside " + std::to_string(min_qp) +
             "..51");
      if (b.deblock & ~(kFilterLeft | kFilterTop)) fail(at() + ": unknown deblock bits");
      if (b.flags & 0x80) fail(at() + ": unknown flag bits");
      // Edges of the picture are never filtered; a set bit there would read outside it.
      if (bx == 0 && (b.deblock & kFilterLeft)) fail(at() + ": kFilterLeft on the picture edge");
      if (by == 0 && (b.deblock & kFilterTop)) fail(at() + ": kFilterTop on the picture edge");
    }
  }
}

void check_sao(const PictureInfo& info, std::size_t ctbs) {
  check_size(info.sao_params.size(), ctbs, "sao_params");
  const int planes = info.chroma_format_idc == 0 ? 1 : 3;
  for (std::size_t i = 0; i < ctbs; ++i) {
    const SaoParams& p = info.sao_params[i];
    for (int c = 0; c < planes; ++c) {
      const std::string at = "sao_params[" + std::to_string(i) + "] component " + std::to_string(c);
      const int bd = c ? info.bit_depth_chroma : info.bit_depth_luma;
      const int limit = ((1 << ((bd < 10 ? bd : 10) - 5)) - 1) << (bd - (bd < 10 ? bd : 10));
      if (p.type[c] > 2) fail(at + ": type " + std::to_string(p.type[c]));
      if (p.type[c] == 1 && p.band_position[c] > 31)
        fail(at + ": band_position " + std::to_string(p.band_position[c]));
      if (p.type[c] == 2 && p.eo_class[c] > 3)
        fail(at + ": eo_class " + std::to_string(p.eo_class[c]));
      for (int k = 0; k < 4; ++k)
        if (p.offset[c][k] < -limit || p.offset[c][k] > limit)
          fail(at + ": offset " + std::to_string(p.offset[c][k]) + " outside +-" +
               std::to_string(limit));
    }
  }
}

}  // namespace

Geometry make_geometry(const PictureInfo& info) {
  if (info.width <= 0 || info.height <= 0 || info.width % 8 || info.height % 8)
    fail("picture size " + std::to_string(info.width) + "x" + std::to_string(info.height) +
         " is not a positive multiple of 8");
  if (info.width > 16888 || info.height > 16888)  // level 6.2's largest picture side
    fail("picture size " + std::to_string(info.width) + "x" + std::to_string(info.height) +
         " is larger than any level allows");
  if (info.bit_depth_luma < 8 || info.bit_depth_luma > 12 || info.bit_depth_chroma < 8 ||
      info.bit_depth_chroma > 12)
    fail("bit depths " + std::to_string(info.bit_depth_luma) + "/" +
         std::to_string(info.bit_depth_chroma) + " outside 8..12");
  if (info.chroma_format_idc != 0 && info.chroma_format_idc != 1)
    fail("chroma_format_idc " + std::to_string(info.chroma_format_idc) +
         " (only 0 monochrome and 1 4:2:0 are supported)");
  if (info.log2_ctb_size < 4 || info.log2_ctb_size > 6)
    fail("log2_ctb_size " + std::to_string(info.log2_ctb_size) + " outside 4..6");
  if (info.cb_qp_offset < -12 || info.cb_qp_offset > 12 || info.cr_qp_offset < -12 ||
      info.cr_qp_offset > 12)
    fail("chroma QP offsets outside -12..12");

  Geometry g;
  g.width = info.width;
  g.height = info.height;
  g.blocks_w = info.width / 4;
  g.log2_ctb = info.log2_ctb_size;
  const int ctb = 1 << info.log2_ctb_size;
  g.ctbs_w = (info.width + ctb - 1) / ctb;
  g.ctbs_h = (info.height + ctb - 1) / ctb;
  g.planes = info.chroma_format_idc == 0 ? 1 : 3;
  g.bit_depth[0] = info.bit_depth_luma;
  g.bit_depth[1] = g.bit_depth[2] = info.bit_depth_chroma;
  g.chroma_qp_offset[1] = info.cb_qp_offset;
  g.chroma_qp_offset[2] = info.cr_qp_offset;
  g.deblocking = info.deblocking;
  g.across_tiles = info.filter_across_tiles;

  const std::size_t ctbs = std::size_t(g.ctbs_w) * g.ctbs_h;
  const int blocks_h = info.height / 4;
  check_size(info.blocks.size(), std::size_t(g.blocks_w) * blocks_h, "blocks");
  if (!info.motion.empty())
    check_size(info.motion.size(), std::size_t(g.blocks_w) * blocks_h, "motion");
  if (info.slices.empty()) fail("slices is empty");
  if (info.slices.size() > 65535) fail("more than 65535 slices");
  if (!info.ctb_slice.empty()) {
    check_size(info.ctb_slice.size(), ctbs, "ctb_slice");
    for (std::size_t i = 0; i < ctbs; ++i)
      if (info.ctb_slice[i] >= info.slices.size())
        fail("ctb_slice[" + std::to_string(i) + "] = " + std::to_string(info.ctb_slice[i]) +
             " but there are " + std::to_string(info.slices.size()) + " slices");
  }
  if (!info.ctb_tile.empty()) check_size(info.ctb_tile.size(), ctbs, "ctb_tile");
  for (std::size_t i = 0; i < info.slices.size(); ++i) {
    const SliceParams& s = info.slices[i];
    if (s.beta_offset_div2 < -6 || s.beta_offset_div2 > 6 || s.tc_offset_div2 < -6 ||
        s.tc_offset_div2 > 6)
      fail("slices[" + std::to_string(i) + "]: deblocking offsets outside -6..6");
  }
  check_blocks(info, g.blocks_w, blocks_h);
  if (info.sao) {
    check_sao(info, ctbs);
    for (std::size_t i = 0; i < ctbs && !g.sao; ++i) {
      const SliceParams& s = info.slices[info.ctb_slice.empty() ? 0 : info.ctb_slice[i]];
      const SaoParams& p = info.sao_params[i];
      g.sao =
          (s.sao_luma && p.type[0]) || (g.planes > 1 && s.sao_chroma && (p.type[1] || p.type[2]));
    }
  }
  return g;
}

namespace {

// May SAO in CTB a read a sample of CTB b (8.7.3)? Across a slice boundary the later slice's
// flag decides: the current sample's slice when the neighbour precedes it in decoding order,
// the neighbour's slice when it follows. PictureInfo numbers slices in decoding order, so
// "precedes" is "has the lower slice index".
bool sao_may_read(const PictureInfo& info, const CtbParams& a, const CtbParams& b) {
  if (a.slice != b.slice) {
    const SliceParams& later = info.slices[b.slice < a.slice ? a.slice : b.slice];
    if (!later.filter_across_slices) return false;
  }
  return info.filter_across_tiles || a.tile == b.tile;
}

}  // namespace

std::vector<CtbParams> make_ctb_params(const PictureInfo& info, const Geometry& g) {
  std::vector<CtbParams> out(std::size_t(g.ctbs_w) * g.ctbs_h);
  for (std::size_t i = 0; i < out.size(); ++i) {
    CtbParams& o = out[i];
    o.slice = info.ctb_slice.empty() ? 0 : info.ctb_slice[i];
    o.tile = info.ctb_tile.empty() ? 0 : info.ctb_tile[i];
    const SliceParams& s = info.slices[o.slice];
    o.beta_offset_div2 = s.beta_offset_div2;
    o.tc_offset_div2 = s.tc_offset_div2;
    if (!g.sao) continue;
    const SaoParams& p = info.sao_params[i];
    for (int c = 0; c < 3; ++c) {  // (not c < g.planes: GCC then fears c > 2)
      if (c >= g.planes || !(c ? s.sao_chroma : s.sao_luma)) continue;
      o.sao_type[c] = p.type[c];
      o.sao_arg[c] = p.type[c] == 1 ? p.band_position[c] : p.eo_class[c];
      for (int k = 0; k < 4; ++k) o.sao_offset[c][k] = std::int8_t(p.offset[c][k]);
    }
  }
  for (int cy = 0; cy < g.ctbs_h; ++cy)
    for (int cx = 0; cx < g.ctbs_w; ++cx) {
      CtbParams& o = out[std::size_t(cy) * g.ctbs_w + cx];
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = cx + dx, ny = cy + dy;
          if (nx < 0 || ny < 0 || nx >= g.ctbs_w || ny >= g.ctbs_h) continue;
          if (sao_may_read(info, o, out[std::size_t(ny) * g.ctbs_w + nx]))
            o.sao_open = std::uint16_t(o.sao_open | sao_open_bit(dx, dy));
        }
    }
  // kNoFilter anywhere in a CTB, in one pass over the blocks.
  const int shift = g.log2_ctb - 2;
  for (int by = 0; by < g.height / 4; ++by) {
    const BlockInfo* row = info.blocks.data() + std::size_t(by) * g.blocks_w;
    CtbParams* ctbs = out.data() + std::size_t(by >> shift) * g.ctbs_w;
    for (int bx = 0; bx < g.blocks_w; ++bx)
      ctbs[bx >> shift].no_filter |= row[bx].flags & kNoFilter;
  }
  return out;
}

}  // namespace sigpu::hevc_filter
