// Intra prediction of one transform block from its record, written once for host and device, in
// the pieces a thread block can share out: each reference sample gathered from the picture with
// the recorded availability and substituted (8.4.4.2.2), each filtered (8.4.4.2.3, strong intra
// smoothing included), then each predicted sample (planar, DC with its edge filter, angular with
// the negative angles' projected references and the edge filters of modes 10 and 26: 8.4.4.2.4
// to 8.4.4.2.6). The intra stage's CPU twin (intra_stage.hpp) and its CUDA kernel
// (cuda/intra_kernel.cuh) take every formula from here. The decoder's own CPU path
// (intra_pred.hpp: gather_intra_refs, intra_predict) works on whole blocks with vectorised
// rows; the tests hold it and this code to the same samples.
//
// The reference array of a block of n samples a side has 4n + 1 entries, in the order the
// substitution scans them (as intra_pred.hpp's):
//   ref[0 .. 2n-1]   p[-1][2n-1] .. p[-1][0]   (left column, bottom up)
//   ref[2n]          p[-1][-1]
//   ref[2n+1 .. 4n]  p[0][-1] .. p[2n-1][-1]   (top row, left to right)
// 4:2:0 and 4:0:0 only, as the CPU reconstruction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"
#include "hevc/inter_sample.hpp"
#include "hevc/records.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

/// The picture-wide parameters of intra prediction.
struct IntraStageParams {
  int bit_depth[2] = {8, 8};      ///< BitDepthY, BitDepthC
  bool filter_refs = true;        ///< !intra_smoothing_disabled_flag
  bool strong_smoothing = false;  ///< strong_intra_smoothing_enabled_flag
  int chroma_format = 1;          ///< chroma_format_idc: 0 or 1 (4:2:0)
};

/// What intra prediction reads of one TuRecords entry.
struct IntraTu {
  int x, y, log2, comp, mode, flags;
  std::uint32_t avail;
};

/// TuRecords' arrays that intra prediction reads, as pointers (host or device memory).
struct IntraArrays {
  const std::uint16_t *x, *y;
  const std::uint8_t *log2, *comp, *mode, *flags;
  const std::uint32_t* avail;

  SIGPU_HD IntraTu operator[](std::size_t t) const {
    return {x[t], y[t], log2[t], comp[t], mode[t], flags[t], avail[t]};
  }
};

/// The arrays of `tu` (host memory).
inline IntraArrays intra_arrays(const TuRecords& tu) {
  return {tu.x.data(),    tu.y.data(),     tu.log2.data(), tu.comp.data(),
          tu.mode.data(), tu.flags.data(), tu.avail.data()};
}

// ---- reference samples (8.4.4.2.2) ------------------------------------------------------------

namespace detail {

SIGPU_HD inline int highest_bit(std::uint64_t v) {  // v != 0
#ifdef __CUDA_ARCH__
  return 63 - __clzll(static_cast<long long>(v));
#else
  return 63 - __builtin_clzll(v);
#endif
}

SIGPU_HD inline int lowest_bit(std::uint64_t v) {  // v != 0
#ifdef __CUDA_ARCH__
  return __ffsll(static_cast<long long>(v)) - 1;
#else
  return __builtin_ctzll(v);
#endif
}

}  // namespace detail

/// A block's reference units in the reference array's order: unit s covers `unit` entries
/// from s * unit for the left column (s < units), the corner alone (s == units, entry 2n), then
/// the top row. Bit s of `available`: the unit's samples are the picture's.
struct IntraRefUnits {
  int n, unit, units;  ///< block size, samples per unit, units per side
  std::uint64_t available;
};

SIGPU_HD inline IntraRefUnits intra_ref_units(const IntraTu& tu) {
  IntraRefUnits r;
  r.n = 1 << tu.log2;
  r.unit = avail_unit(tu.comp);
  r.units = 2 * r.n / r.unit;
  std::uint64_t a = static_cast<std::uint64_t>(tu.avail >> kAvailTopShift) << (r.units + 1);
  if (tu.flags & kTuCorner) a |= std::uint64_t{1} << r.units;
  for (int u = 0; u < r.units; ++u)  // the left column bottom up: the record's bits reversed
    if ((tu.avail >> u) & 1) a |= std::uint64_t{1} << (r.units - 1 - u);
  r.available = a;
  return r;
}

/// Entry k of the reference array of `tu` in the picture: the sample it is (available) or the
/// one substitution copies into it (the nearest available sample before it in the array's order,
/// or the first after it where none comes before), read from `plane` (the component's, stride
/// in samples); 1 << (bit_depth - 1) when no reference is available.
SIGPU_HD inline int intra_ref_sample(const IntraTu& tu, const IntraRefUnits& r, int k,
                                     const std::uint16_t* plane, int stride, int bit_depth) {
  if (!r.available) return 1 << (bit_depth - 1);
  const int n2 = 2 * r.n;
  const int s = k < n2 ? k / r.unit : (k == n2 ? r.units : r.units + 1 + (k - n2 - 1) / r.unit);
  // The unit's first entry, and the entry whose sample stands in for k.
  auto first_of = [&](int u) {
    return u < r.units ? u * r.unit : (u == r.units ? n2 : n2 + 1 + (u - r.units - 1) * r.unit);
  };
  int src = k;
  if (!((r.available >> s) & 1)) {
    const std::uint64_t before = r.available & ((std::uint64_t{1} << s) - 1);
    if (before) {
      const int u = detail::highest_bit(before);
      src = u == r.units ? n2 : first_of(u) + r.unit - 1;
    } else {
      src = first_of(detail::lowest_bit(r.available));
    }
  }
  int px, py;
  if (src < n2) {
    px = tu.x - 1;
    py = tu.y + n2 - 1 - src;
  } else {
    px = tu.x + src - n2 - 1;
    py = tu.y - 1;
  }
  return plane[static_cast<std::ptrdiff_t>(py) * stride + px];
}

// ---- filtering (8.4.4.2.3) ---------------------------------------------------------------------

enum class IntraFilter : std::uint8_t { none, smooth, strong };

/// How the references of `tu` are filtered, from their unfiltered values `ref`.
SIGPU_HD inline IntraFilter intra_filter(const IntraTu& tu, const IntraStageParams& p,
                                         const std::int32_t* ref) {
  const int n = 1 << tu.log2;
  if (tu.comp != 0 || !p.filter_refs || tu.mode == 1 || n == 4) return IntraFilter::none;
  const int d26 = tu.mode > 26 ? tu.mode - 26 : 26 - tu.mode;
  const int d10 = tu.mode > 10 ? tu.mode - 10 : 10 - tu.mode;
  const int dist = d26 < d10 ? d26 : d10;
  const int thres = n == 8 ? 7 : (n == 16 ? 1 : 0);
  if (dist <= thres) return IntraFilter::none;
  if (p.strong_smoothing && n == 32) {
    const int limit = 1 << (p.bit_depth[0] - 5);
    const int v = ref[2 * n] + ref[4 * n] - 2 * ref[3 * n];
    const int h = ref[2 * n] + ref[0] - 2 * ref[n];
    if ((v < 0 ? -v : v) < limit && (h < 0 ? -h : h) < limit) return IntraFilter::strong;
  }
  return IntraFilter::smooth;
}

/// Entry k of the filtered reference array of a block of n samples a side.
SIGPU_HD inline std::int32_t intra_filtered_ref(const std::int32_t* ref, int k, int n,
                                                IntraFilter f) {
  const int last = 4 * n;
  if (f == IntraFilter::none || k == 0 || k == last) return ref[k];
  if (f == IntraFilter::smooth) return (ref[k - 1] + 2 * ref[k] + ref[k + 1] + 2) >> 2;
  // Strong: bilinear from the corner to the far ends (n = 32).
  const int corner = ref[2 * n];
  if (k == 2 * n) return corner;
  if (k < 2 * n) {
    const int i = 2 * n - 1 - k;
    return ((63 - i) * corner + (i + 1) * ref[0] + 32) >> 6;
  }
  const int i = k - 2 * n - 1;
  return ((63 - i) * corner + (i + 1) * ref[last] + 32) >> 6;
}

// ---- prediction (8.4.4.2.4 to 8.4.4.2.6) -----------------------------------------------------

/// A block's filtered references and what each of its samples' prediction needs.
struct IntraBlock {
  const std::int32_t* ref;  ///< the filtered reference array
  int log2, mode, bit_depth;
  bool luma;
  int dc;  ///< DC mode: dcVal
};

SIGPU_HD inline IntraBlock intra_block(const IntraTu& tu, const IntraStageParams& p,
                                       const std::int32_t* filtered) {
  IntraBlock b{filtered, tu.log2, tu.mode, p.bit_depth[tu.comp ? 1 : 0], tu.comp == 0, 0};
  if (tu.mode == 1) {
    const int n = 1 << tu.log2;
    int sum = n;
    for (int i = 0; i < n; ++i) sum += filtered[2 * n - 1 - i] + filtered[2 * n + 1 + i];
    b.dc = sum >> (tu.log2 + 1);
  }
  return b;
}

/// intraPredAngle of an angular mode (Table 8-5) and, negative, its invAngle (Table 8-6): both
/// follow from the distance to the nearest of modes 10 and 26. (Switches, not tables, so that
/// device code needs no copy of them.)
SIGPU_HD constexpr int intra_angle(int mode) {
  const bool vertical = mode >= 18;
  const int d = vertical ? mode - 26 : 10 - mode;  // > 0: the angle is positive
  const int m = d < 0 ? -d : d;
  const int a = m == 0   ? 0
                : m == 1 ? 2
                : m == 2 ? 5
                : m == 3 ? 9
                : m == 4 ? 13
                : m == 5 ? 17
                : m == 6 ? 21
                : m == 7 ? 26
                         : 32;
  return d < 0 ? -a : a;
}
SIGPU_HD constexpr int intra_inv_angle(int angle) {  // angle < 0
  switch (angle) {
    case -2:
      return -4096;
    case -5:
      return -1638;
    case -9:
      return -910;
    case -13:
      return -630;
    case -17:
      return -482;
    case -21:
      return -390;
    case -26:
      return -315;
    default:
      return -256;
  }
}

/// The prediction of sample (x, y) of the block.
SIGPU_HD inline int intra_predict_sample(const IntraBlock& b, int x, int y) {
  const int n = 1 << b.log2;
  const std::int32_t* ref = b.ref;
  auto left = [&](int i) { return ref[2 * n - 1 - i]; };  // p[-1][i], i = -1..2n-1
  auto top = [&](int i) { return ref[2 * n + 1 + i]; };   // p[i][-1], i = -1..2n-1
  auto clip = [&](int v) {
    const int max = (1 << b.bit_depth) - 1;
    return v < 0 ? 0 : (v > max ? max : v);
  };
  if (b.mode == 0)
    return ((n - 1 - x) * left(y) + (x + 1) * top(n) + (n - 1 - y) * top(x) + (y + 1) * left(n) +
            n) >>
           (b.log2 + 1);
  if (b.mode == 1) {
    if (!b.luma || n == 32 || (x && y)) return b.dc;
    if (!x && !y) return (left(0) + 2 * b.dc + top(0) + 2) >> 2;
    return ((x ? top(x) : left(y)) + 3 * b.dc + 2) >> 2;
  }
  const bool edges = b.luma && n < 32;
  if (edges && b.mode == 26 && x == 0) return clip(top(0) + ((left(y) - left(-1)) >> 1));
  if (edges && b.mode == 10 && y == 0) return clip(left(0) + ((top(x) - top(-1)) >> 1));
  const bool vertical = b.mode >= 18;
  const int angle = intra_angle(b.mode);
  // refMain[k] (k = -n..2n): the main reference, extended to the left by the side one
  // projected (negative angles).
  auto main_ref = [&](int k) {
    if (k >= 0) return vertical ? top(k - 1) : left(k - 1);
    const int s = ((k * intra_inv_angle(angle) + 128) >> 8) - 1;
    return vertical ? left(s) : top(s);
  };
  const int i = vertical ? x : y, j = vertical ? y : x;
  const int pos = (j + 1) * angle, idx = pos >> 5, fact = pos & 31;
  const int a = main_ref(i + idx + 1);
  return fact ? ((32 - fact) * a + fact * main_ref(i + idx + 2) + 16) >> 5 : a;
}

/// Sample (x, y) of `tu` reconstructed: its prediction plus, where the block is coded, its
/// residual (the residual stage's plane), clipped to the bit depth; written to the picture.
SIGPU_HD inline void intra_write_sample(const IntraTu& tu, const IntraBlock& b, int x, int y,
                                        const ResidualPlanes& residual, const InterPlanes& out) {
  const int c = tu.comp;
  int v = intra_predict_sample(b, x, y);
  if (tu.flags & kTuCoded) {
    v += residual.data[c][(tu.y + y) * residual.stride[c] + tu.x + x];
    const int max = (1 << b.bit_depth) - 1;
    v = v < 0 ? 0 : (v > max ? max : v);
  }
  out.data[c][static_cast<std::ptrdiff_t>(tu.y + y) * out.stride[c] + tu.x + x] =
      static_cast<std::uint16_t>(v);
}

}  // namespace sigpu::hevc
