#include "hevc/intra_stage.hpp"

#include <algorithm>
#include <string>

#include "hevc/errors.hpp"

namespace sigpu::hevc {

void order_intra_tus(const TuRecords& tu, int width, int height, const IntraStageParams& p,
                     IntraOrder& out) {
  if (p.chroma_format > 1)
    throw Unsupported("intra stage: chroma format " + std::to_string(p.chroma_format) +
                      " (4:0:0 and 4:2:0 only)");
  const int planes = p.chroma_format == 0 ? 1 : 3;
  // A map of levels per component in units of avail_unit samples: in 4:2:0 every component has
  // one unit per 4x4 luma block, so the maps are alike.
  const int cw = (width + 3) / 4, ch = (height + 3) / 4;
  const std::size_t map_size = static_cast<std::size_t>(cw) * ch;
  out.cells.assign(map_size * planes, 0);
  out.level_of_tu.resize(tu.size());
  std::uint32_t levels = 0;
  for (std::size_t t = 0; t < tu.size(); ++t) {
    if (!(tu.flags[t] & kTuIntra)) continue;
    auto fail = [&](const char* what) {
      throw DecodeError("intra stage: TU " + std::to_string(t) + " " + what);
    };
    const int c = tu.comp[t], log2 = tu.log2[t];
    if (c >= planes || log2 < 2 || log2 > 5 || tu.mode[t] > 34) fail("has no valid size or mode");
    const int n = 1 << log2, x = tu.x[t], y = tu.y[t];
    const int pw = c ? width / 2 : width, ph = c ? height / 2 : height;
    if (x % n || y % n || x + n > pw || y + n > ph) fail("lies outside the picture");
    const int unit = avail_unit(c), units = 2 * n / unit;
    const std::uint32_t left = tu.avail[t] & 0xffff, top = tu.avail[t] >> kAvailTopShift;
    const bool corner = tu.flags[t] & kTuCorner;
    const int left_units = left ? 32 - __builtin_clz(left) : 0;
    const int top_units = top ? 32 - __builtin_clz(top) : 0;
    if (left_units > units || top_units > units || ((left || corner) && x == 0) ||
        ((top || corner) && y == 0) || y + left_units * unit > ph || x + top_units * unit > pw)
      fail("has references outside the picture");
    std::uint32_t* map = out.cells.data() + map_size * c;
    const int ux = x / unit, uy = y / unit, m = n / unit;
    auto at = [&](int i, int j) -> std::uint32_t& {
      return map[static_cast<std::size_t>(j) * cw + i];
    };
    std::uint32_t level = corner ? at(ux - 1, uy - 1) : 0;
    for (int u = 0; u < units; ++u) {
      if ((left >> u) & 1) level = std::max(level, at(ux - 1, uy + u));
      if ((top >> u) & 1) level = std::max(level, at(ux + u, uy - 1));
    }
    ++level;
    for (int j = 0; j < m; ++j) std::fill_n(&at(ux, uy + j), m, level);
    out.level_of_tu[t] = level;
    levels = std::max(levels, level);
  }
  // Counting sort by level (levels 1 .. `levels` to indices 0 ..).
  out.begin.assign(levels + 1, 0);
  for (std::size_t t = 0; t < tu.size(); ++t)
    if (tu.flags[t] & kTuIntra) ++out.begin[out.level_of_tu[t]];
  std::uint32_t sum = 0;
  for (std::uint32_t l = 1; l <= levels; ++l) {
    const std::uint32_t count = out.begin[l];
    out.begin[l - 1] = sum;
    sum += count;
  }
  out.begin[levels] = sum;
  out.tu.resize(sum);
  // The map's storage, no longer needed, holds each level's next free slot.
  std::vector<std::uint32_t>& next = out.cells;
  next.assign(out.begin.begin(), out.begin.end());
  for (std::size_t t = 0; t < tu.size(); ++t)
    if (tu.flags[t] & kTuIntra)
      out.tu[next[out.level_of_tu[t] - 1]++] = static_cast<std::uint32_t>(t);
}

void intra_stage_cpu(const TuRecords& tu, const IntraOrder& order, const IntraStageParams& p,
                     const ResidualPlanes& residual, const InterPlanes& planes) {
  const IntraArrays arrays = intra_arrays(tu);
  std::int32_t ref[4 * 32 + 1], filtered[4 * 32 + 1];
  for (std::size_t l = 0; l < order.levels(); ++l)
    for (std::uint32_t k = order.begin[l]; k < order.begin[l + 1]; ++k) {
      const IntraTu t = arrays[order.tu[k]];
      const IntraRefUnits units = intra_ref_units(t);
      const int c = t.comp, n = 1 << t.log2, bit_depth = p.bit_depth[c ? 1 : 0];
      for (int i = 0; i <= 4 * n; ++i)
        ref[i] = intra_ref_sample(t, units, i, planes.data[c], planes.stride[c], bit_depth);
      const IntraFilter f = intra_filter(t, p, ref);
      for (int i = 0; i <= 4 * n; ++i) filtered[i] = intra_filtered_ref(ref, i, n, f);
      const IntraBlock b = intra_block(t, p, filtered);
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) intra_write_sample(t, b, x, y, residual, planes);
    }
}

}  // namespace sigpu::hevc
