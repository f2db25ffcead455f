// Small pictures whose filtered samples were worked out by hand from the equations of H.265
// 8.7.2 (deblocking) and 8.7.3 (SAO); the arithmetic is in the comments. The CPU tests and the
// GPU tests run the same list.
#pragma once

#include <string>
#include <vector>

#include "hevc_filter/small_picture.hpp"

namespace sigpu::test {

struct Expect {
  int c, x, y, value;
};

struct HandCase {
  std::string name;
  SmallPicture pic;
  std::vector<Expect> expect;  ///< samples checked after filtering; all others keep their value
                               ///< unless changes_elsewhere
  bool changes_elsewhere = false;
};

namespace hand_detail {

using namespace hevc_filter;

/// Writes one row (or column) of 8 samples p3..p0 q0..q3 across the edge at `edge`.
inline void line(SmallPicture& s, int c, bool vertical, int edge, int pos, const int (&v)[8]) {
  for (int i = 0; i < 8; ++i) {
    if (vertical)
      s.at(c, edge - 4 + i, pos) = std::uint16_t(v[i]);
    else
      s.at(c, pos, edge - 4 + i) = std::uint16_t(v[i]);
  }
}

inline void expect_line(std::vector<Expect>& e, int c, bool vertical, int edge, int pos,
                        const int (&v)[8]) {
  for (int i = 0; i < 8; ++i)
    e.push_back(vertical ? Expect{c, edge - 4 + i, pos, v[i]} : Expect{c, pos, edge - 4 + i, v[i]});
}

// Strong filter, 8 bit, QP 37 on both sides, intra (bS 2), no offsets:
// beta' (Q 37) = 36, tc' (Q 37 + 2) = 5. Lines p3..q3 = 100 100 100 100 | 110 110 110 110:
// all second derivatives 0 < beta; 2*dpq 0 < 36>>2; |p3-p0|+|q0-q3| 0 < 36>>3; |p0-q0| 10 <
// (5*5+1)>>1 = 13: dE = 2.
//   p0' = (100 + 200 + 200 + 220 + 110 + 4) >> 3 = 834 >> 3 = 104
//   p1' = (100 + 100 + 100 + 110 + 2) >> 2 = 103
//   p2' = (200 + 300 + 100 + 100 + 110 + 4) >> 3 = 814 >> 3 = 101
//   q0' = (100 + 200 + 220 + 220 + 110 + 4) >> 3 = 854 >> 3 = 106
//   q1' = (100 + 110 + 110 + 110 + 2) >> 2 = 108
//   q2' = (100 + 110 + 110 + 330 + 220 + 4) >> 3 = 874 >> 3 = 109
inline HandCase strong(bool vertical, std::uint8_t p_flags = 0) {
  HandCase h{vertical ? "strong vertical" : "strong horizontal", SmallPicture(16, 16, 37), {}};
  const int in[8] = {100, 100, 100, 100, 110, 110, 110, 110};
  int out[8] = {100, 101, 103, 104, 106, 108, 109, 110};
  if (p_flags & kNoFilter) {  // pcm / bypass on the p side: only q changes (nDp = 0)
    h.name += ", p side pcm";
    for (int i = 0; i < 4; ++i) out[i] = in[i];
  }
  if (vertical)
    h.pic.vertical_edge(8, 0, 16);
  else
    h.pic.horizontal_edge(8, 0, 16);
  for (int k = 0; k < 16; ++k) {
    line(h.pic, 0, vertical, 8, k, in);
    expect_line(h.expect, 0, vertical, 8, k, out);
  }
  // The p side: columns 0..7 (vertical edge) or rows 0..7 (horizontal edge).
  for (int a = 0; a < 16; a += 4)
    for (int b = 0; b < 8; b += 4)
      (vertical ? h.pic.block(b, a) : h.pic.block(a, b)).flags |= p_flags;
  return h;
}

// Normal filter with dEp and without dEq, tc clipping, 8 bit: QP 30 both sides, bS 2:
// beta' (30) = 22, tc' (32) = 3. p3..q3 = 70 70 71 73 | 90 91 94 94.
//   dp = |70 - 142 + 73| = 1, dq = |94 - 182 + 90| = 2 on every line; d = 2 * 3 = 6 < 22.
//   strong? 2 * dpq = 6 >= 22 >> 2 = 5: no, dE = 1.
//   dEp: dp0 + dp3 = 2 < (22 + 11) >> 3 = 4: yes. dEq: 4 < 4: no.
//   delta = (9 * 17 - 3 * 20 + 8) >> 4 = 101 >> 4 = 6 < 10 * tc, clipped to tc = 3.
//   p0' = 76, q0' = 87; dp = Clip3(-1, 1, ((143 >> 1) - 71 + 3) >> 1 = 2) = 1: p1' = 72.
// In 10 bit (samples * 4): beta 88, tc 12, dp 4, dq 8, dEp 8 < 16 yes, dEq 16 < 16 no,
//   delta = (9 * 68 - 3 * 80 + 8) >> 4 = 23, clipped to 12: p0' = 304, q0' = 348;
//   dp = Clip3(-6, 6, ((573 >> 1) - 284 + 12) >> 1 = 7) = 6: p1' = 290.
// The picture has two slices split at the edge (CTB 0 | CTB 1): the p side's slice has
// tc_offset_div2 +6, which would give tc' (44) = 9 and an unclipped delta of 6; the q side's
// slice (offset 0) is the one that counts.
inline HandCase normal(int bit_depth) {
  HandCase h{"normal dEp, " + std::to_string(bit_depth) + " bit, offsets of q's slice",
             SmallPicture(32, 16, 30, true, bit_depth),
             {}};
  h.pic.info.slices.resize(2);
  h.pic.info.slices[0].tc_offset_div2 = 6;
  h.pic.info.ctb_slice = {0, 1};
  h.pic.vertical_edge(16, 0, 16);
  const int s = bit_depth == 10 ? 4 : 1;
  const int in[8] = {70 * s, 70 * s, 71 * s, 73 * s, 90 * s, 91 * s, 94 * s, 94 * s};
  const int out8[8] = {70, 70, 72, 76, 87, 91, 94, 94};
  const int out10[8] = {280, 280, 290, 304, 348, 364, 376, 376};
  for (int y = 0; y < 16; ++y) {
    line(h.pic, 0, true, 16, y, in);
    expect_line(h.expect, 0, true, 16, y, bit_depth == 10 ? out10 : out8);
  }
  return h;
}

// Normal decision but |delta| >= 10 tc: nothing changes. Same QP 30 (tc 3) and derivatives as
// above, q side raised: p3..q3 = 70 70 71 73 | 160 161 164 164,
//   delta = (9 * 87 - 3 * 90 + 8) >> 4 = 521 >> 4 = 32 >= 30.
// The second 4-line segment is textured instead (p = 0 60 0 60: dp = 120 >= beta): dE = 0.
inline HandCase untouched() {
  HandCase h{"large step and texture untouched", SmallPicture(16, 8, 30), {}};
  h.pic.vertical_edge(8, 0, 8);
  const int step[8] = {70, 70, 71, 73, 160, 161, 164, 164};
  const int texture[8] = {0, 60, 0, 60, 100, 100, 100, 100};
  for (int y = 0; y < 8; ++y) {
    line(h.pic, 0, true, 8, y, y < 4 ? step : texture);
    expect_line(h.expect, 0, true, 8, y, y < 4 ? step : texture);
  }
  return h;
}

// Chroma, 4:2:0, 8 bit, QP 37 both sides, pps_cb_qp_offset 0, pps_cr_qp_offset -7:
//   Cb: qPi 37 -> QpC 34 (Table 8-10), Q = 34 + 2 = 36, tc' = 4.
//   Cr: qPi 30 -> QpC 29, Q = 31, tc' = 3.
// p1 p0 | q0 q1 = 100 100 | 120 120: delta = Clip3(-tc, tc, (80 + 100 - 120 + 4) >> 3 = 8):
//   Cb 104 | 116, Cr 103 | 117.
// The chroma edge at chroma x 8 is luma x 16. Chroma rows 0..3 take bS from luma row 0 (intra:
// 2) even though luma rows 4..7 have no edge at all; rows 4..7 take it from luma row 8, where
// the edge is a coded TU edge between inter blocks (bS 1): not filtered.
inline HandCase chroma() {
  HandCase h{"chroma cb/cr offsets and bS from luma row 8m", SmallPicture(32, 16, 37, false), {}};
  h.pic.info.cr_qp_offset = -7;
  h.pic.vertical_edge(16, 0, 4);
  h.pic.vertical_edge(16, 8, 16, kCodedLuma);
  const int in[8] = {100, 100, 100, 100, 120, 120, 120, 120};
  const int cb[8] = {100, 100, 100, 104, 116, 120, 120, 120};
  const int cr[8] = {100, 100, 100, 103, 117, 120, 120, 120};
  for (int c = 1; c < 3; ++c)
    for (int y = 0; y < 8; ++y) {
      line(h.pic, c, true, 8, y, in);
      expect_line(h.expect, c, true, 8, y, y < 4 ? (c == 1 ? cb : cr) : in);
    }
  return h;
}

// SAO band offset, 8 bit: bandShift 3, sao_band_position 10, offsets 1 2 -3 4 on bands 10..13.
// 80 (band 10) -> 81, 95 (11) -> 97, 100 (12) -> 97, 104 (13) -> 108, 112 (14) -> 112,
// 79 (9) -> 79. Chroma Cb: position 30, bands 30 31 0 1 with offsets 5 6 7 -7:
// 5 (band 0) -> 12, 255 (31) -> 261 clipped to 255, 8 (1) -> 1, 16 (2) -> 16, 240 (30) -> 245.
// A pcm / bypass block keeps its samples.
inline HandCase band() {
  HandCase h{"sao band offset", SmallPicture(16, 16, 30, false), {}};
  auto& i = h.pic.info;
  i.sao = true;
  i.slices[0].sao_luma = i.slices[0].sao_chroma = true;
  i.sao_params.resize(1);
  SaoParams& p = i.sao_params[0];
  p.type[0] = 1;
  p.band_position[0] = 10;
  const int lo[4] = {1, 2, -3, 4}, co[4] = {5, 6, 7, -7};
  p.type[1] = p.type[2] = 1;
  p.band_position[1] = 30;
  for (int k = 0; k < 4; ++k) {
    p.offset[0][k] = std::int16_t(lo[k]);
    p.offset[1][k] = std::int16_t(co[k]);
  }
  const int ly[6][2] = {{80, 81}, {95, 97}, {100, 97}, {104, 108}, {112, 112}, {79, 79}};
  for (int k = 0; k < 6; ++k) {
    h.pic.at(0, k, 0) = std::uint16_t(ly[k][0]);
    h.expect.push_back({0, k, 0, ly[k][1]});
  }
  const int cy[5][2] = {{5, 12}, {255, 255}, {8, 1}, {16, 16}, {240, 245}};
  for (int k = 0; k < 5; ++k) {
    h.pic.at(1, k, 1) = std::uint16_t(cy[k][0]);
    h.expect.push_back({1, k, 1, cy[k][1]});
  }
  h.pic.block(8, 8).flags |= kNoFilter;  // luma 8..11 x 8..11 and chroma 4..5 x 4..5
  h.pic.at(0, 9, 9) = 80;
  h.pic.at(1, 4, 4) = 5;
  h.expect.push_back({0, 9, 9, 80});
  h.expect.push_back({1, 4, 4, 5});
  // Every other sample (128, band 16) is in no offset band: nothing else changes.
  return h;
}

// SAO edge offset, each class, 8 bit, offsets 3 2 -2 -3 (SaoOffsetVal[1..4]).
// edgeIdx = 2 + Sign(c - a) + Sign(c - b), then 0 1 2 -> 1 2 0:
//   local minimum (both neighbours greater) -> 1: +3;  one greater, one equal -> 2: +2;
//   one smaller, one equal -> 3: -2;  local maximum -> 4: -3;  otherwise unchanged.
// The neighbours are the deblocked samples, never the SAO output: in "10 5 10 5 10" both 10s
// between 5s are maxima (-3) and both 5s minima (+3). Samples on the picture edge in the
// class's direction are left alone.
inline HandCase edge(int eo_class) {
  HandCase h{"sao edge class " + std::to_string(eo_class), SmallPicture(16, 16, 30), {}};
  auto& i = h.pic.info;
  i.sao = true;
  i.slices[0].sao_luma = true;
  i.sao_params.resize(1);
  SaoParams& p = i.sao_params[0];
  p.type[0] = 2;
  p.eo_class[0] = std::uint8_t(eo_class);
  const int off[4] = {3, 2, -2, -3};
  for (int k = 0; k < 4; ++k) p.offset[0][k] = std::int16_t(off[k]);
  // Along the class's direction (dx, dy) from the first neighbour through the sample.
  const int dx = eo_class == 1 ? 0 : 1, dy = eo_class == 0 ? 0 : 1;
  const int sx = eo_class == 3 ? -1 : 1;  // class 3 runs up-right: walk x backwards
  auto pos = [&](int k, int& x, int& y) {
    x = (eo_class == 3 ? 12 : 2) + sx * dx * k;
    y = 2 + dy * k;
  };
  // Fill the whole picture with 128, then a line of 10 5 10 5 10 8 8 5 8 8 along the
  // direction: the samples at k = 1..8 see both neighbours on the line.
  const int v[10] = {10, 5, 10, 5, 10, 8, 8, 5, 8, 8};
  for (int k = 0; k < 10; ++k) {
    int x, y;
    pos(k, x, y);
    h.pic.at(0, x, y) = std::uint16_t(v[k]);
  }
  // k: 1 min +3 -> 8; 2 max -3 -> 7; 3 min -> 8; 4 (5, 10, 8) max -> 7; 5 (10, 8, 8): one
  // greater, one equal -> 2: +2 -> 10; 6 (8, 8, 5): one smaller, one equal -> 3: -2 -> 6;
  // 7 min (8, 5, 8) -> 8; 8 (5, 8, 8) -> 6.
  const int out[9] = {0, 8, 7, 8, 7, 10, 6, 8, 6};
  for (int k = 1; k < 9; ++k) {
    int x, y;
    pos(k, x, y);
    h.expect.push_back({0, x, y, out[k]});
  }
  // A picture-edge sample: a local minimum whose outer neighbour is outside the picture.
  if (eo_class == 0) {
    h.pic.at(0, 0, 14) = 5;
    h.expect.push_back({0, 0, 14, 5});
  } else {
    h.pic.at(0, 7, 0) = 5;
    h.expect.push_back({0, 7, 0, 5});
  }
  h.changes_elsewhere = true;  // the 128s next to the line change too
  return h;
}

// SAO across a slice boundary, edge class 0 (horizontal), 32x16 picture, CTB 0 in slice 0,
// CTB 1 in slice 1. x 15 (slice 0) looks right into the later slice 1: slice 1's flag decides;
// x 16 (slice 1) looks left into the earlier slice 0: slice 1's own flag decides. So with
// slice 0 "across" off and slice 1 on, both samples are filtered; with slice 0 on and slice 1
// off, neither. Tiles split the same way and loop_filter_across_tiles off block it too.
inline HandCase slices(bool first_across, bool second_across, bool tiles_closed) {
  HandCase h{std::string("sao slice boundary, across ") + (first_across ? "1" : "0") + "/" +
                 (second_across ? "1" : "0") + (tiles_closed ? ", tiles closed" : ""),
             SmallPicture(32, 16, 30),
             {}};
  auto& i = h.pic.info;
  i.sao = true;
  i.slices.resize(2);
  i.slices[0].filter_across_slices = first_across;
  i.slices[1].filter_across_slices = second_across;
  for (auto& s : i.slices) s.sao_luma = true;
  i.ctb_slice = {0, 1};
  if (tiles_closed) {
    i.ctb_tile = {0, 1};
    i.filter_across_tiles = false;
  }
  i.sao_params.resize(2);
  for (auto& p : i.sao_params) {
    p.type[0] = 2;
    p.eo_class[0] = 0;
    p.offset[0][0] = 3;  // local minimum: +3
  }
  // 128 everywhere; row 5 has minima at x 15 and 16 (... 128 100 100 128 ...: one equal
  // neighbour, edgeIdx 2 -> SaoOffsetVal[2] = 0): use 128 90 100 128 instead, x 15 = 90 is a
  // minimum (+3) unless blocked; x 16 = 100 is "one smaller, one greater": unchanged anyway.
  // Row 9: 128 100 90 128: x 16 = 90 is the minimum.
  h.pic.at(0, 15, 5) = 90;
  h.pic.at(0, 16, 5) = 100;
  h.pic.at(0, 15, 9) = 100;
  h.pic.at(0, 16, 9) = 90;
  const bool open = second_across && !tiles_closed;
  h.expect.push_back({0, 15, 5, open ? 93 : 90});
  h.expect.push_back({0, 16, 9, open ? 93 : 90});
  h.expect.push_back({0, 16, 5, 100});
  h.expect.push_back({0, 15, 9, 100});
  return h;
}

}  // namespace hand_detail

inline std::vector<HandCase> hand_cases() {
  using namespace hand_detail;
  std::vector<HandCase> v;
  v.push_back(strong(true));
  v.push_back(strong(false));
  v.push_back(strong(true, hevc_filter::kNoFilter));
  v.push_back(normal(8));
  v.push_back(normal(10));
  v.push_back(untouched());
  v.push_back(chroma());
  v.push_back(band());
  for (int c = 0; c < 4; ++c) v.push_back(edge(c));
  v.push_back(slices(false, true, false));
  v.push_back(slices(true, false, false));
  v.push_back(slices(true, true, true));
  return v;
}

}  // namespace sigpu::test
