// Shared assertions of the HEVC filter tests (CPU and GPU suites).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include <sigpu/hevc_filter.hpp>

#include "hevc_filter/hand_cases.hpp"
#include "hevc_filter/synthetic.hpp"

namespace sigpu::test {

/// Filters a hand case with `backend` and checks every listed sample (and, unless the case says
/// otherwise, that no other sample changed).
inline void check_hand_case(HandCase h, Backend backend) {
  SCOPED_TRACE(h.name + " on " + std::string(to_string(backend)));
  const SmallPicture before = h.pic;
  hevc_filter::filter_picture(h.pic.info, h.pic.planes(), backend);
  std::map<std::tuple<int, int, int>, int> want;
  for (const Expect& e : h.expect) want[{e.c, e.x, e.y}] = e.value;
  for (int c = 0; c < 3; ++c) {
    const int w = h.pic.plane_width(c);
    for (std::size_t i = 0; i < h.pic.samples[c].size(); ++i) {
      const int x = int(i % std::size_t(w)), y = int(i / std::size_t(w));
      const auto it = want.find({c, x, y});
      if (it != want.end()) {
        EXPECT_EQ(h.pic.samples[c][i], it->second) << "component " << c << " x " << x << " y " << y;
      } else if (!h.changes_elsewhere) {
        EXPECT_EQ(h.pic.samples[c][i], before.samples[c][i])
            << "component " << c << " x " << x << " y " << y << " changed";
      }
    }
  }
}

/// Index and value of the first sample where two pictures differ, for a readable failure.
inline std::string first_difference(const SyntheticPicture& a, const SyntheticPicture& b) {
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < a.samples[c].size(); ++i)
      if (a.samples[c][i] != b.samples[c][i]) {
        const int w = a.plane_width(c);
        return "component " + std::to_string(c) + " x " + std::to_string(i % std::size_t(w)) +
               " y " + std::to_string(i / std::size_t(w)) + ": " + std::to_string(a.samples[c][i]) +
               " vs " + std::to_string(b.samples[c][i]);
      }
  return "identical";
}

/// The random picture configurations every backend is compared on: sizes that are and are not
/// CTB multiples, 8 and 10 bit, 4:2:0 and monochrome, CTB 16/32/64, slices, tiles with the
/// across flags off, pcm/bypass, deblocking disabled per slice, SAO on most CTBs; the last two
/// turn deblocking and SAO off.
inline std::vector<SyntheticOptions> random_configs() {
  std::vector<SyntheticOptions> v;
  std::uint64_t seed = 1;
  for (int bd : {8, 10})
    for (int log2_ctb : {4, 5, 6})
      for (bool mono : {false, true}) {
        SyntheticOptions o;
        o.width = 8 * (13 + int(seed % 7) * 5);
        o.height = 8 * (9 + int(seed % 5) * 3);
        o.bit_depth = bd;
        o.monochrome = mono;
        o.log2_ctb = log2_ctb;
        o.max_log2_cu = log2_ctb;
        o.qp_min = bd == 10 ? -12 : 0;
        o.qp_max = 51;
        o.tile_cols = 1 + int(seed % 3);
        o.tile_rows = 1 + int(seed % 2);
        o.slices = 1 + int(seed % 4);
        o.across_tiles = seed % 2;
        o.slice_deblock_off = 0.2;
        o.no_filter = 0.05;
        o.seed = seed++;
        v.push_back(o);
      }
  // The filter switches: deblocking off (SAO from the unfiltered picture), SAO off.
  v.push_back(v[0]);
  v.back().deblocking = false;
  v.push_back(v[3]);
  v.back().sao = false;
  return v;
}

}  // namespace sigpu::test
