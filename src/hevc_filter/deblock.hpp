// The deblocking filter's per-edge logic (H.265 8.7.2), written once for the CPU drivers and the
// CUDA kernel: boundary strength of one 4-sample edge segment, the edge parameters (beta, tc,
// exemptions), the luma decisions taken on lines 0 and 3 of a segment, and the filtering of one
// line across the edge. Samples are addressed from q0 with `across` (the step from p0 to q0: 1
// for a vertical edge, the row stride for a horizontal one), so one function serves both
// directions and both memory layouts (a plane, or a tile in shared memory).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "hevc_filter/picture.hpp"
#include "hevc_filter/tables.hpp"

namespace sigpu::hevc_filter {

SIGPU_HD inline int iabs(int v) {
  return v < 0 ? -v : v;
}

SIGPU_HD inline bool mv_differ(const std::int16_t* a, const std::int16_t* b) {
  return iabs(a[0] - b[0]) >= 4 || iabs(a[1] - b[1]) >= 4;
}

/// bS from motion alone (8.7.2.4, the conditions after intra and coded luma): 1 when the two
/// prediction blocks use different reference pictures, a different number of motion vectors, or
/// motion vectors for the same picture that differ by 4 quarter samples or more.
SIGPU_HD inline int motion_bs(const Motion& p, const Motion& q) {
  const int np = (p.ref[0] >= 0) + (p.ref[1] >= 0), nq = (q.ref[0] >= 0) + (q.ref[1] >= 0);
  if (np != nq) return 1;
  if (np == 0) return 0;
  if (np == 1) {
    const int lp = p.ref[0] >= 0 ? 0 : 1, lq = q.ref[0] >= 0 ? 0 : 1;
    if (p.ref[lp] != q.ref[lq]) return 1;  // which list does not matter, only which picture
    return mv_differ(p.mv[lp], q.mv[lq]);
  }
  const bool straight = p.ref[0] == q.ref[0] && p.ref[1] == q.ref[1];
  const bool crossed = p.ref[0] == q.ref[1] && p.ref[1] == q.ref[0];
  if (!straight && !crossed) return 1;
  const bool straight_differs = mv_differ(p.mv[0], q.mv[0]) || mv_differ(p.mv[1], q.mv[1]);
  const bool crossed_differs = mv_differ(p.mv[0], q.mv[1]) || mv_differ(p.mv[1], q.mv[0]);
  if (p.ref[0] != p.ref[1])  // two different pictures: pair the vectors by picture
    return straight ? straight_differs : crossed_differs;
  return straight_differs && crossed_differs;  // both vectors refer to the same picture
}

/// bS of the edge segment between blocks p and q (8.7.2.4); 0 when it is not a transform or
/// prediction block edge. `vertical` picks the left or the top edge flags of q.
SIGPU_HD inline int boundary_strength(const BlockInfo& p, const BlockInfo& q, const Motion* mp,
                                      const Motion* mq, bool vertical) {
  const std::uint8_t tu = vertical ? kLeftTuEdge : kTopTuEdge;
  const std::uint8_t pu = vertical ? kLeftPuEdge : kTopPuEdge;
  if (!(q.flags & (tu | pu))) return 0;
  if ((p.flags | q.flags) & kIntra) return 2;
  if ((q.flags & tu) && ((p.flags | q.flags) & kCodedLuma)) return 1;
  return mp ? motion_bs(*mp, *mq) : 0;
}

/// What filtering one edge segment needs besides its samples; tc == 0 means nothing to do.
struct EdgeParams {
  int beta = 0, tc = 0;
  bool no_p = false, no_q = false;  ///< pcm / transquant bypass: that side is left untouched
};

/// Luma parameters (8.7.2.5.3): Q from the mean of the two QpY, slice offsets from q0's slice.
SIGPU_HD inline EdgeParams luma_params(const BlockInfo& p, const BlockInfo& q, int bs,
                                       const CtbParams& q_ctb, int bit_depth) {
  EdgeParams e;
  const int qpl = (p.qp_y + q.qp_y + 1) >> 1;
  const int scale = 1 << (bit_depth - 8);
  e.beta = beta_prime(clip3(0, 51, qpl + 2 * q_ctb.beta_offset_div2)) * scale;
  e.tc = tc_prime(clip3(0, 53, qpl + 2 * (bs - 1) + 2 * q_ctb.tc_offset_div2)) * scale;
  e.no_p = p.flags & kNoFilter;
  e.no_q = q.flags & kNoFilter;
  return e;
}

/// Chroma parameters (8.7.2.5.5), for bS == 2 edges only: QpC from Table 8-10 with the PPS
/// offset of the component (the slice-level chroma offsets do not apply to deblocking).
SIGPU_HD inline EdgeParams chroma_params(const BlockInfo& p, const BlockInfo& q,
                                         const CtbParams& q_ctb, int qp_offset, int bit_depth) {
  EdgeParams e;
  const int qpc = chroma_qp_420(((p.qp_y + q.qp_y + 1) >> 1) + qp_offset);
  e.tc = tc_prime(clip3(0, 53, qpc + 2 + 2 * q_ctb.tc_offset_div2)) * (1 << (bit_depth - 8));
  e.no_p = p.flags & kNoFilter;
  e.no_q = q.flags & kNoFilter;
  return e;
}

/// The luma decisions of one segment (8.7.2.5.3 and 8.7.2.5.6).
struct LumaDecision {
  int mode = 0;  ///< 0 no filtering, 1 normal, 2 strong (dE)
  bool dep = false, deq = false;
};

/// q0 points at q0 of line 0; `along` steps to the next line of the segment.
SIGPU_HD inline LumaDecision decide_luma(const std::uint16_t* q0, std::ptrdiff_t across,
                                         std::ptrdiff_t along, int beta, int tc) {
  LumaDecision r;
  const std::uint16_t* l0 = q0;
  const std::uint16_t* l3 = q0 + 3 * along;
  auto s = [across](const std::uint16_t* l, int i) { return int(l[i * across]); };  // i<0: p
  const int dp0 = iabs(s(l0, -3) - 2 * s(l0, -2) + s(l0, -1));
  const int dp3 = iabs(s(l3, -3) - 2 * s(l3, -2) + s(l3, -1));
  const int dq0 = iabs(s(l0, 2) - 2 * s(l0, 1) + s(l0, 0));
  const int dq3 = iabs(s(l3, 2) - 2 * s(l3, 1) + s(l3, 0));
  const int dpq0 = dp0 + dq0, dpq3 = dp3 + dq3;
  if (dpq0 + dpq3 >= beta) return r;
  auto strong = [&](const std::uint16_t* l, int dpq) {
    return 2 * dpq < (beta >> 2) &&
           iabs(s(l, -4) - s(l, -1)) + iabs(s(l, 0) - s(l, 3)) < (beta >> 3) &&
           iabs(s(l, -1) - s(l, 0)) < ((5 * tc + 1) >> 1);
  };
  r.mode = strong(l0, dpq0) && strong(l3, dpq3) ? 2 : 1;
  r.dep = dp0 + dp3 < ((beta + (beta >> 1)) >> 3);
  r.deq = dq0 + dq3 < ((beta + (beta >> 1)) >> 3);
  return r;
}

/// Filters one line across a luma edge (8.7.2.5.7); q0 points at its q0.
SIGPU_HD inline void filter_luma_line(std::uint16_t* q0, std::ptrdiff_t across,
                                      const LumaDecision& d, const EdgeParams& e, int max_value) {
  const int p3 = q0[-4 * across], p2 = q0[-3 * across], p1 = q0[-2 * across], p0 = q0[-across];
  const int q0v = q0[0], q1 = q0[across], q2 = q0[2 * across], q3 = q0[3 * across];
  const int tc = e.tc;
  if (d.mode == 2) {
    const int tc2 = 2 * tc;
    if (!e.no_p) {
      q0[-across] =
          std::uint16_t(clip3(p0 - tc2, p0 + tc2, (p2 + 2 * p1 + 2 * p0 + 2 * q0v + q1 + 4) >> 3));
      q0[-2 * across] = std::uint16_t(clip3(p1 - tc2, p1 + tc2, (p2 + p1 + p0 + q0v + 2) >> 2));
      q0[-3 * across] =
          std::uint16_t(clip3(p2 - tc2, p2 + tc2, (2 * p3 + 3 * p2 + p1 + p0 + q0v + 4) >> 3));
    }
    if (!e.no_q) {
      q0[0] = std::uint16_t(
          clip3(q0v - tc2, q0v + tc2, (p1 + 2 * p0 + 2 * q0v + 2 * q1 + q2 + 4) >> 3));
      q0[across] = std::uint16_t(clip3(q1 - tc2, q1 + tc2, (p0 + q0v + q1 + q2 + 2) >> 2));
      q0[2 * across] =
          std::uint16_t(clip3(q2 - tc2, q2 + tc2, (p0 + q0v + q1 + 3 * q2 + 2 * q3 + 4) >> 3));
    }
    return;
  }
  int delta = (9 * (q0v - p0) - 3 * (q1 - p1) + 8) >> 4;
  if (iabs(delta) >= tc * 10) return;
  delta = clip3(-tc, tc, delta);
  if (!e.no_p) {
    q0[-across] = std::uint16_t(clip3(0, max_value, p0 + delta));
    if (d.dep) {
      const int dp = clip3(-(tc >> 1), tc >> 1, (((p2 + p0 + 1) >> 1) - p1 + delta) >> 1);
      q0[-2 * across] = std::uint16_t(clip3(0, max_value, p1 + dp));
    }
  }
  if (!e.no_q) {
    q0[0] = std::uint16_t(clip3(0, max_value, q0v - delta));
    if (d.deq) {
      const int dq = clip3(-(tc >> 1), tc >> 1, (((q2 + q0v + 1) >> 1) - q1 - delta) >> 1);
      q0[across] = std::uint16_t(clip3(0, max_value, q1 + dq));
    }
  }
}

/// Filters one line across a chroma edge (8.7.2.5.8).
SIGPU_HD inline void filter_chroma_line(std::uint16_t* q0, std::ptrdiff_t across,
                                        const EdgeParams& e, int max_value) {
  const int p1 = q0[-2 * across], p0 = q0[-across], q0v = q0[0], q1 = q0[across];
  const int delta = clip3(-e.tc, e.tc, ((((q0v - p0) * 4) + p1 - q1 + 4) >> 3));
  if (!e.no_p) q0[-across] = std::uint16_t(clip3(0, max_value, p0 + delta));
  if (!e.no_q) q0[0] = std::uint16_t(clip3(0, max_value, q0v - delta));
}

/// Everything about one edge segment of component c that the side information decides: the
/// parameters, or tc == 0 when the segment is not filtered. (bx, by) is q's 4x4 block; p is its
/// left (vertical edge) or upper neighbour.
SIGPU_HD inline EdgeParams segment_params(const Geometry& g, const SideInfo& s, int c, int bx,
                                          int by, bool vertical) {
  const int qi = by * g.blocks_w + bx;
  const int pi = vertical ? qi - 1 : qi - g.blocks_w;
  const BlockInfo q = s.blocks[qi];
  if (!(q.deblock & (vertical ? kFilterLeft : kFilterTop))) return {};
  const BlockInfo p = s.blocks[pi];
  const int bs = boundary_strength(p, q, s.motion ? s.motion + pi : nullptr,
                                   s.motion ? s.motion + qi : nullptr, vertical);
  if (bs == 0 || (c > 0 && bs != 2)) return {};
  const CtbParams& ctb = s.ctbs[g.ctb_at(bx * 4, by * 4)];
  return c == 0 ? luma_params(p, q, bs, ctb, g.bit_depth[0])
                : chroma_params(p, q, ctb, g.qp_offset(c), g.depth(c));
}

}  // namespace sigpu::hevc_filter
