// Random but valid side information and pictures for the HEVC in-loop filters, without a
// decoder: CTBs split into coding units of 8..64 (implicit splits at the picture edge), intra
// and inter CUs with the HEVC partition modes (AMP included), transform trees down to 4x4 with
// random coded-luma flags, motion vectors and reference pictures near the bS thresholds, PCM /
// bypass CUs, slices in tile-scan order, tiles, the across-slice/tile flags and per-slice
// deblocking switches, SAO parameters of every type, class and band. Samples are a smooth
// field plus a per-CU step and per-CU noise, so that every deblocking decision (strong, normal
// with and without dEp/dEq, none) and every SAO category occurs.
//
// Header-only: the tests and bench/hevc_filter_bench.cpp share it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "hevc_filter/test_picture.hpp"
#include "support/rng.hpp"

namespace sigpu::test {

struct SyntheticOptions {
  int width = 64, height = 64;
  int bit_depth = 8;
  bool monochrome = false;
  int log2_ctb = 4;
  int min_log2_cu = 3, max_log2_cu = 6;
  double split = 0.5;       ///< probability to split a CU further
  double inter = 0.5;       ///< probability a CU is inter predicted
  double no_filter = 0.03;  ///< probability of a PCM / bypass CU
  int qp_min = 22, qp_max = 37;
  int tile_cols = 1, tile_rows = 1;
  int slices = 1;
  bool across_tiles = true;
  double across_slices = 0.5;      ///< probability per slice of slice_loop_filter_across_slices
  double slice_deblock_off = 0.0;  ///< probability per slice of slice_deblocking_filter_disabled
  int max_offset_div2 = 6;         ///< beta/tc offsets drawn from -max..max
  bool deblocking = true;
  bool sao = true;
  double sao_ctb = 0.8;  ///< probability that a CTB has SAO on a component
  double noise = 1.0;    ///< scales the texture
  std::uint64_t seed = 1;
};

using SyntheticPicture = TestPicture;

/// Realistic All-Intra side information, as in the paper's test conditions: CTB 64, CUs of
/// 8..64, QP 22..37, no deblocking offsets, SAO on about 80% of the CTBs of each component.
inline SyntheticOptions all_intra_options(int width, int height, int bit_depth) {
  SyntheticOptions o;
  o.width = width;
  o.height = height;
  o.bit_depth = bit_depth;
  o.log2_ctb = 6;
  o.split = 0.6;
  o.inter = 0;
  o.no_filter = 0;
  o.qp_min = 22;
  o.qp_max = 37;
  o.max_offset_div2 = 0;
  o.sao_ctb = 0.8;
  return o;
}

namespace synthetic_detail {

using namespace hevc_filter;

struct Builder {
  const SyntheticOptions& o;
  Rng rng;
  PictureInfo& pi;
  int bw, bh;
  std::vector<int> cu_id;  // per 4x4 block: which CU, to tell CU edges from internal edges
  std::vector<bool> slice_deblock_off;
  int next_cu = 0;

  Builder(const SyntheticOptions& opt, PictureInfo& info)
      : o(opt), rng{opt.seed * 0x9E3779B97F4A7C15ull + 7}, pi(info) {}

  bool chance(double p) { return rng.uniform() < p; }
  int range(int lo, int hi) { return lo + int(rng.below(unsigned(hi - lo + 1))); }

  BlockInfo& block(int x, int y) { return pi.blocks[std::size_t(y / 4) * bw + x / 4]; }

  void mark_rect(int x0, int y0, int w, int h, std::uint8_t left, std::uint8_t top) {
    for (int y = y0; y < y0 + h && y < pi.height; y += 4) block(x0, y).flags |= left;
    for (int x = x0; x < x0 + w && x < pi.width; x += 4) block(x, y0).flags |= top;
  }

  Motion random_motion(const Motion* like) {
    Motion m;
    const int pattern = range(0, 2);  // L0, L1, bi
    for (int l = 0; l < 2; ++l) {
      if (!(pattern == 2 || pattern == l)) continue;
      m.ref[l] = 10 + range(0, 2);
      for (int k = 0; k < 2; ++k) {
        // Vectors near a neighbour's, so |difference| falls on both sides of 4.
        const int base = like && like->ref[l] >= 0 ? like->mv[l][k] : range(-64, 64);
        m.mv[l][k] = std::int16_t(base + range(-5, 5));
      }
    }
    if (pattern == 2 && chance(0.3)) m.ref[1] = m.ref[0];  // both vectors on one picture
    if (like && chance(0.25)) m = *like;                   // identical motion: bS 0
    return m;
  }

  void transform_tree(int x0, int y0, int log2) {
    if (x0 >= pi.width || y0 >= pi.height) return;
    if (log2 > 5 || (log2 > 2 && chance(0.4))) {
      const int h = 1 << (log2 - 1);
      for (int k = 0; k < 4; ++k) transform_tree(x0 + (k & 1) * h, y0 + (k >> 1) * h, log2 - 1);
      return;
    }
    const int size = 1 << log2;
    mark_rect(x0, y0, size, size, kLeftTuEdge, kTopTuEdge);
    const bool coded = chance(0.5);
    for (int y = y0; y < y0 + size && y < pi.height; y += 4)
      for (int x = x0; x < x0 + size && x < pi.width; x += 4)
        if (coded) block(x, y).flags |= kCodedLuma;
  }

  void prediction_units(int x0, int y0, int size) {
    // part_mode: 2Nx2N, 2NxN, Nx2N, NxN, 2NxnU, 2NxnD, nLx2N, nRx2N
    const int mode = range(0, size > 8 ? 7 : 3);
    const int q = size / 4, hf = size / 2;
    std::vector<int> xs{0}, ys{0};
    if (mode == 2 || mode == 3) xs.push_back(hf);
    if (mode == 1 || mode == 3) ys.push_back(hf);
    if (mode == 4) ys.push_back(q);
    if (mode == 5) ys.push_back(size - q);
    if (mode == 6) xs.push_back(q);
    if (mode == 7) xs.push_back(size - q);
    xs.push_back(size);
    ys.push_back(size);
    for (std::size_t j = 0; j + 1 < ys.size(); ++j) {
      for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
        const int px = x0 + xs[i], py = y0 + ys[j], pw = xs[i + 1] - xs[i], ph = ys[j + 1] - ys[j];
        if (px >= pi.width || py >= pi.height) continue;
        mark_rect(px, py, pw, ph, kLeftPuEdge, kTopPuEdge);
        const Motion* like =
            px > 0 ? &pi.motion[std::size_t(py / 4) * bw + (px - 1) / 4]
                   : (py > 0 ? &pi.motion[std::size_t(py / 4 - 1) * bw + px / 4] : nullptr);
        const Motion m = random_motion(like);
        for (int y = py; y < py + ph && y < pi.height; y += 4)
          for (int x = px; x < px + pw && x < pi.width; x += 4)
            pi.motion[std::size_t(y / 4) * bw + x / 4] = m;
      }
    }
  }

  void coding_unit(int x0, int y0, int log2) {
    const int size = 1 << log2;
    const bool must_split = x0 + size > pi.width || y0 + size > pi.height;
    if (log2 > o.min_log2_cu &&
        (must_split || log2 > o.max_log2_cu || (log2 > 3 && chance(o.split)))) {
      const int h = size / 2;
      for (int k = 0; k < 4; ++k) {
        const int x = x0 + (k & 1) * h, y = y0 + (k >> 1) * h;
        if (x < pi.width && y < pi.height) coding_unit(x, y, log2 - 1);
      }
      return;
    }
    const int id = next_cu++;
    const bool intra = !chance(o.inter);
    const bool no_filter = chance(o.no_filter);
    const int qp = range(o.qp_min, o.qp_max);
    for (int y = y0; y < y0 + size; y += 4)
      for (int x = x0; x < x0 + size; x += 4) {
        BlockInfo& b = block(x, y);
        b.flags = std::uint8_t((intra ? kIntra : 0) | (no_filter ? kNoFilter : 0));
        b.qp_y = std::int8_t(qp);
        cu_id[std::size_t(y / 4) * bw + x / 4] = id;
      }
    mark_rect(x0, y0, size, size, kLeftTuEdge | kLeftPuEdge, kTopTuEdge | kTopPuEdge);
    if (!intra) prediction_units(x0, y0, size);
    transform_tree(x0, y0, log2);
  }

  int ctb_of(int x, int y) const {
    const int s = 1 << o.log2_ctb, cw = (pi.width + s - 1) / s;
    return (y / s) * cw + x / s;
  }

  // filterEdgeFlag: 0 at the picture edge, at tile edges without across_tiles, at slice edges
  // whose q-side slice says not across, and everywhere in slices with deblocking disabled.
  void deblock_flags() {
    for (int by = 0; by < bh; ++by) {
      for (int bx = 0; bx < bw; ++bx) {
        BlockInfo& b = pi.blocks[std::size_t(by) * bw + bx];
        const int cur = ctb_of(bx * 4, by * 4);
        const int slice = pi.ctb_slice[cur];
        auto open = [&](int nx, int ny) {
          const int n = ctb_of(nx, ny);
          if (pi.ctb_tile[n] != pi.ctb_tile[cur] && !pi.filter_across_tiles) return false;
          if (pi.ctb_slice[n] != slice && !pi.slices[slice].filter_across_slices) return false;
          return true;
        };
        if (slice_deblock_off[slice]) continue;
        if (bx > 0 && open(bx * 4 - 4, by * 4)) b.deblock |= kFilterLeft;
        if (by > 0 && open(bx * 4, by * 4 - 4)) b.deblock |= kFilterTop;
      }
    }
  }

  void slices_and_tiles(int cw, int ch) {
    pi.ctb_tile.assign(std::size_t(cw) * ch, 0);
    std::vector<int> col_start, row_start;
    const int tc = std::min(o.tile_cols, cw), tr = std::min(o.tile_rows, ch);
    for (int i = 0; i <= tc; ++i) col_start.push_back(i * cw / tc);
    for (int i = 0; i <= tr; ++i) row_start.push_back(i * ch / tr);
    std::vector<int> tile_scan;  // CTB raster addresses in decoding order
    for (int r = 0; r < tr; ++r)
      for (int c = 0; c < tc; ++c)
        for (int y = row_start[r]; y < row_start[r + 1]; ++y)
          for (int x = col_start[c]; x < col_start[c + 1]; ++x) {
            pi.ctb_tile[std::size_t(y) * cw + x] = std::uint16_t(r * tc + c);
            tile_scan.push_back(y * cw + x);
          }
    const int n = int(tile_scan.size());
    const int slices = std::min(o.slices, n);
    std::vector<int> cuts;
    while (int(cuts.size()) < slices - 1) {
      const int c = range(1, n - 1);
      if (std::find(cuts.begin(), cuts.end(), c) == cuts.end()) cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    pi.ctb_slice.assign(std::size_t(n), 0);
    for (int ts = 0, s = 0; ts < n; ++ts) {
      while (s < int(cuts.size()) && cuts[s] <= ts) ++s;
      pi.ctb_slice[tile_scan[ts]] = std::uint16_t(s);
    }
    for (int s = 0; s < slices; ++s) {
      SliceParams sp;
      sp.beta_offset_div2 = std::int8_t(range(-o.max_offset_div2, o.max_offset_div2));
      sp.tc_offset_div2 = std::int8_t(range(-o.max_offset_div2, o.max_offset_div2));
      sp.sao_luma = chance(0.9);
      sp.sao_chroma = chance(0.9);
      sp.filter_across_slices = chance(o.across_slices);
      pi.slices.push_back(sp);
      slice_deblock_off.push_back(chance(o.slice_deblock_off));
    }
  }

  void sao_params(int ctbs) {
    const int bd = o.bit_depth, bdm = std::min(bd, 10);
    const int limit = (1 << (bdm - 5)) - 1;
    pi.sao_params.resize(std::size_t(ctbs));
    for (SaoParams& p : pi.sao_params) {
      for (int c = 0; c < (o.monochrome ? 1 : 3); ++c) {
        if (c == 2) {  // Cr shares Cb's type and edge class (7.4.9.3.2)
          p.type[2] = p.type[1];
          p.eo_class[2] = p.eo_class[1];
        } else {
          p.type[c] = chance(o.sao_ctb) ? std::uint8_t(range(1, 2)) : 0;
          p.eo_class[c] = std::uint8_t(range(0, 3));
        }
        p.band_position[c] = std::uint8_t(range(0, 31));
        for (int k = 0; k < 4; ++k) {
          int v = range(0, limit);
          if (p.type[c] == 1 ? chance(0.5) : k >= 2) v = -v;  // edge: + + - -
          p.offset[c][k] = std::int16_t(v * (1 << (bd - bdm)));
        }
      }
    }
  }

  // A smooth field, a step per CU and noise per CU.
  void samples(std::vector<std::uint16_t>* planes) {
    const int max = (1 << o.bit_depth) - 1, scale = 1 << (o.bit_depth - 8);
    std::vector<int> cu_step(static_cast<std::size_t>(next_cu)), cu_noise(cu_step.size());
    const int noise_levels[] = {0, 0, 1, 1, 2, 3, 6, 24};
    for (int i = 0; i < next_cu; ++i) {
      cu_step[std::size_t(i)] = range(-12, 12) * scale;
      cu_noise[std::size_t(i)] = int(noise_levels[range(0, 7)] * o.noise * scale);
    }
    const double fx = 0.02 + 0.05 * rng.uniform(), fy = 0.02 + 0.05 * rng.uniform();
    for (int c = 0; c < (o.monochrome ? 1 : 3); ++c) {
      const int sh = c ? 1 : 0, w = pi.width >> sh, h = pi.height >> sh;
      planes[c].resize(std::size_t(w) * h);
      const int mid = (c ? 128 : 110) * scale;
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          const int cu = cu_id[std::size_t((y << sh) / 4) * bw + (x << sh) / 4];
          const int noise = cu_noise[std::size_t(cu)];
          const double smooth = 60.0 * scale * std::sin(fx * (x << sh)) * std::cos(fy * (y << sh));
          int v = mid + int(smooth) + cu_step[std::size_t(cu)] / (c ? 2 : 1);
          if (noise) v += range(-noise, noise);
          if (chance(0.002)) v = range(0, 1) * max;  // saturated samples test the clipping
          planes[c][std::size_t(y) * w + x] = std::uint16_t(std::clamp(v, 0, max));
        }
      }
    }
  }
};

}  // namespace synthetic_detail

inline SyntheticPicture make_synthetic_picture(const SyntheticOptions& o) {
  SyntheticPicture sp;
  hevc_filter::PictureInfo& pi = sp.info;
  pi.width = o.width;
  pi.height = o.height;
  pi.bit_depth_luma = pi.bit_depth_chroma = o.bit_depth;
  pi.chroma_format_idc = o.monochrome ? 0 : 1;
  pi.log2_ctb_size = o.log2_ctb;
  synthetic_detail::Builder b(o, pi);
  b.bw = o.width / 4;
  b.bh = o.height / 4;
  pi.cb_qp_offset = b.range(-12, 12);
  pi.cr_qp_offset = b.range(-12, 12);
  pi.deblocking = o.deblocking;
  pi.sao = o.sao;
  pi.filter_across_tiles = o.across_tiles;
  pi.blocks.assign(std::size_t(b.bw) * b.bh, {});
  if (o.inter > 0) pi.motion.assign(pi.blocks.size(), {});
  b.cu_id.assign(pi.blocks.size(), 0);
  const int s = 1 << o.log2_ctb, cw = (o.width + s - 1) / s, ch = (o.height + s - 1) / s;
  b.slices_and_tiles(cw, ch);
  for (int y = 0; y < o.height; y += s)
    for (int x = 0; x < o.width; x += s) b.coding_unit(x, y, o.log2_ctb);
  b.deblock_flags();
  if (o.sao) b.sao_params(cw * ch);
  b.samples(sp.samples);
  return sp;
}

}  // namespace sigpu::test
