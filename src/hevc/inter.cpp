// Inter coding units (7.3.8.5, 7.3.8.6, 7.3.8.9): part_mode, prediction units, merge and AMVP
// motion vector derivation with temporal prediction (8.5.3.2), and the motion the
// reconstruction, the filters and later pictures read.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "hevc/slice_decoder.hpp"

namespace sigpu::hevc {
namespace {

enum PartMode { k2Nx2N, k2NxN, kNx2N, kNxN, k2NxnU, k2NxnD, knLx2N, knRx2N };

bool same_motion(const MvField& a, const MvField& b) {
  for (int l = 0; l < 2; ++l) {
    if (a.ref_idx[l] != b.ref_idx[l]) return false;
    if (a.ref_idx[l] >= 0 && (a.mv[l][0] != b.mv[l][0] || a.mv[l][1] != b.mv[l][1])) return false;
  }
  return true;
}

// 8-183..8-185 (and 8-209..8-211): mv scaled by the ratio of POC distances tb / td.
std::int16_t scale_component(int mv, int td, int tb) {
  td = std::clamp(td, -128, 127);
  tb = std::clamp(tb, -128, 127);
  const int tx = (16384 + (std::abs(td) >> 1)) / td;
  const int dsf = std::clamp((tb * tx + 32) >> 6, -4096, 4095);
  const int prod = dsf * mv;
  const int v = (prod >= 0 ? 1 : -1) * ((std::abs(prod) + 127) >> 8);
  return static_cast<std::int16_t>(std::clamp(v, -32768, 32767));
}

void scale_mv(std::int16_t mv[2], int td, int tb) {
  mv[0] = scale_component(mv[0], td, tb);
  mv[1] = scale_component(mv[1], td, tb);
}

}  // namespace

int SliceDecoder::parse_part_mode_inter(int log2) {
  if (cabac_.decode(ctx_[kCtxPartMode])) return k2Nx2N;
  if (log2 == sps_.log2_min_cb) {
    if (cabac_.decode(ctx_[kCtxPartModeInter])) return k2NxN;
    if (log2 == 3) return kNx2N;
    return cabac_.decode(ctx_[kCtxPartModeInter + 1]) ? kNx2N : kNxN;
  }
  const bool horizontal = cabac_.decode(ctx_[kCtxPartModeInter]);
  if (!sps_.amp) return horizontal ? k2NxN : kNx2N;
  if (horizontal) {
    if (cabac_.decode(ctx_[kCtxPartModeInter + 2])) return k2NxN;
    return cabac_.bypass() ? k2NxnD : k2NxnU;
  }
  if (cabac_.decode(ctx_[kCtxPartModeInter + 2])) return kNx2N;
  return cabac_.bypass() ? knRx2N : knLx2N;
}

void SliceDecoder::inter_coding_unit(int x0, int y0, int log2, bool skip, int part_mode) {
  const int n = 1 << log2, h = n / 2, q = n / 4;
  struct Part {
    int x, y, w, h;
  } parts[4];
  int count = 0;
  auto add = [&](int x, int y, int w, int hh) { parts[count++] = {x, y, w, hh}; };
  switch (part_mode) {
    case k2Nx2N:
      add(0, 0, n, n);
      break;
    case k2NxN:
      add(0, 0, n, h), add(0, h, n, h);
      break;
    case kNx2N:
      add(0, 0, h, n), add(h, 0, h, n);
      break;
    case k2NxnU:
      add(0, 0, n, q), add(0, q, n, n - q);
      break;
    case k2NxnD:
      add(0, 0, n, n - q), add(0, n - q, n, q);
      break;
    case knLx2N:
      add(0, 0, q, n), add(q, 0, n - q, n);
      break;
    case knRx2N:
      add(0, 0, n - q, n), add(n - q, 0, q, n);
      break;
    default:
      add(0, 0, h, h), add(h, 0, h, h), add(0, h, h, h), add(h, h, h, h);
      break;
  }
  part_mode_ = part_mode;
  bool merge_2nx2n = false;
  for (int i = 0; i < count; ++i) {
    prediction_unit(x0, y0, n, x0 + parts[i].x, y0 + parts[i].y, parts[i].w, parts[i].h, i, skip);
    if (part_mode == k2Nx2N) merge_2nx2n = merge_flag_;
  }
  record_cu(x0, y0, log2, transquant_bypass_);
  // Prediction block edges inside the coding block, for deblocking.
  auto& blocks = pic_.info.blocks;
  for (int i = 1; i < count; ++i) {
    const Part& p = parts[i];
    if (p.x > 0)
      for (int y = p.y; y < p.y + p.h; y += 4)
        blocks[pic_.block(x0 + p.x, y0 + y)].flags |= hevc_filter::kLeftPuEdge;
    if (p.y > 0)
      for (int x = p.x; x < p.x + p.w; x += 4)
        blocks[pic_.block(x0 + x, y0 + p.y)].flags |= hevc_filter::kTopPuEdge;
  }
  const auto mark_inner_edges = [&](bool filter) {
    if (!filter) return;
    for (int i = 1; i < count; ++i) {
      const Part& p = parts[i];
      if (p.x > 0)
        for (int y = p.y; y < p.y + p.h; y += 4)
          blocks[pic_.block(x0 + p.x, y0 + y)].deblock |= hevc_filter::kFilterLeft;
      if (p.y > 0)
        for (int x = p.x; x < p.x + p.w; x += 4)
          blocks[pic_.block(x0 + x, y0 + p.y)].deblock |= hevc_filter::kFilterTop;
    }
  };
  mark_inner_edges(!sh_.deblocking_disabled);
  bool root_cbf = true;
  if (skip)
    root_cbf = false;
  else if (!merge_2nx2n)
    root_cbf = cabac_.decode(ctx_[kCtxRqtRootCbf]);
  const int recorded_qp = qp_y_;
  if (!root_cbf) {
    record_tu(x0, y0, log2, false);
  } else {
    intra_split_ = 0;
    max_trafo_depth_ = sps_.max_transform_hierarchy_depth_inter;
    inter_split_ = sps_.max_transform_hierarchy_depth_inter == 0 && part_mode != k2Nx2N;
    transform_tree(x0, y0, x0, y0, log2, 0, 0, false, false);
    inter_split_ = false;
  }
  if (qp_y_ != recorded_qp)
    for (int y = y0; y < y0 + n; y += 4)
      for (int x = x0; x < x0 + n; x += 4)
        pic_.info.blocks[pic_.block(x, y)].qp_y = static_cast<std::int8_t>(qp_y_);
  st_.last_qp_y = qp_y_;
}

void SliceDecoder::parse_mvd(int mvd[2]) {
  const bool g0[2] = {cabac_.decode(ctx_[kCtxMvdGreater0]) != 0,
                      cabac_.decode(ctx_[kCtxMvdGreater0]) != 0};
  bool g1[2] = {false, false};
  for (int i = 0; i < 2; ++i)
    if (g0[i]) g1[i] = cabac_.decode(ctx_[kCtxMvdGreater1]);
  for (int i = 0; i < 2; ++i) {
    mvd[i] = 0;
    if (!g0[i]) continue;
    int v = 1;
    if (g1[i]) {                                // abs_mvd_minus2: EG1
      const int ones = cabac_.bypass_ones(16);  // EG1
      if (ones == 16) fail("abs_mvd_minus2", "prefix longer than 16 bins");
      const int k = ones + 1;  // abs_mvd_minus2 is 2^k - 2 plus the k suffix bits
      v = (1 << k) + static_cast<int>(cabac_.bypass_bits(k));
      if (v > 32768) fail("abs_mvd_minus2", "MvdLX beyond 2^15");
    }
    mvd[i] = cabac_.bypass() ? -v : v;
    if (mvd[i] > 32767) fail("abs_mvd_minus2", "MvdLX beyond 2^15 - 1");
  }
}

void SliceDecoder::prediction_unit(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h,
                                   int part_idx, bool skip) {
  MvField m;
  merge_flag_ = skip || cabac_.decode(ctx_[kCtxMergeFlag]);
  if (merge_flag_) {
    int idx = 0;
    if (sh_.max_num_merge_cand > 1 && cabac_.decode(ctx_[kCtxMergeIdx])) {
      idx = 1 + cabac_.bypass_ones(sh_.max_num_merge_cand - 2);
    }
    m = merge_candidate(x_cb, y_cb, n_cb, x, y, w, h, part_idx, idx);
  } else {
    int pred_idc = 0;  // PRED_L0, PRED_L1, PRED_BI
    if (sh_.slice_type == 0) {
      if (w + h != 12 && cabac_.decode(ctx_[kCtxInterPredIdc + pic_.ct_depth[pic_.block(x, y)]]))
        pred_idc = 2;
      else
        pred_idc = cabac_.decode(ctx_[kCtxInterPredIdc + 4]);
    }
    int ref_idx[2] = {-1, -1}, mvd[2][2] = {}, mvp_flag[2] = {};
    for (int l = 0; l < 2; ++l) {
      if (pred_idc != 2 && pred_idc != l) continue;
      int r = 0;
      const int max = sh_.num_ref_idx[l] - 1;
      if (max > 0) {
        while (r < max && r < 2 && cabac_.decode(ctx_[kCtxRefIdx + r])) ++r;
        if (r == 2) r += cabac_.bypass_ones(max - 2);
      }
      ref_idx[l] = r;
      if (l == 1 && sh_.mvd_l1_zero && pred_idc == 2)
        mvd[1][0] = mvd[1][1] = 0;
      else
        parse_mvd(mvd[l]);
      mvp_flag[l] = cabac_.decode(ctx_[kCtxMvpFlag]);
    }
    for (int l = 0; l < 2; ++l) {
      if (ref_idx[l] < 0) continue;
      int mvp[2];
      amvp(x_cb, y_cb, n_cb, x, y, w, h, part_idx, l, ref_idx[l], mvp_flag[l], mvp);
      m.ref_idx[l] = static_cast<std::int8_t>(ref_idx[l]);
      // 8-192..8-195: the sum wraps to 16 bits.
      m.mv[l][0] = static_cast<std::int16_t>(static_cast<std::uint16_t>(mvp[0] + mvd[l][0]));
      m.mv[l][1] = static_cast<std::int16_t>(static_cast<std::uint16_t>(mvp[1] + mvd[l][1]));
    }
  }
  store_motion(x, y, w, h, m);
  PuRecords& pu = rec_.pu;
  pu.x.push_back(static_cast<std::uint16_t>(x));
  pu.y.push_back(static_cast<std::uint16_t>(y));
  pu.w.push_back(static_cast<std::uint8_t>(w));
  pu.h.push_back(static_cast<std::uint8_t>(h));
  pu.mv.push_back({m.mv[0][0], m.mv[0][1], m.mv[1][0], m.mv[1][1]});
  pu.ref_idx.push_back({m.ref_idx[0], m.ref_idx[1]});
  pu.slice.push_back(static_cast<std::uint16_t>(slice_index_));
}

bool SliceDecoder::pb_available(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h,
                                int part_idx, int xn, int yn) const {
  bool av;
  const bool same_cb = x_cb <= xn && y_cb <= yn && x_cb + n_cb > xn && y_cb + n_cb > yn;
  if (!same_cb)
    av = available(x, y, xn, yn);
  else
    av =
        !((w << 1) == n_cb && (h << 1) == n_cb && part_idx == 1 && y_cb + h <= yn && x_cb + w > xn);
  return av && pic_.motion_at(xn, yn).inter();
}

MvField SliceDecoder::merge_candidate(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h,
                                      int part_idx, int merge_idx) {
  const int orig_w = w, orig_h = h;
  int part_mode = part_mode_;
  if (pps_.log2_parallel_merge_level > 2 && n_cb == 8) {
    x = x_cb, y = y_cb, w = h = n_cb, part_idx = 0;
    part_mode = k2Nx2N;
  }
  const int pml = pps_.log2_parallel_merge_level;
  auto usable = [&](int xn, int yn) {
    if ((x >> pml) == (xn >> pml) && (y >> pml) == (yn >> pml)) return false;
    return pb_available(x_cb, y_cb, n_cb, x, y, w, h, part_idx, xn, yn);
  };
  MvField list[5];
  int count = 0;
  const bool vertical_second =
      part_idx == 1 && (part_mode == kNx2N || part_mode == knLx2N || part_mode == knRx2N);
  const bool horizontal_second =
      part_idx == 1 && (part_mode == k2NxN || part_mode == k2NxnU || part_mode == k2NxnD);
  // Spatial candidates A1, B1, B0, A0, B2 (8.5.3.2.3).
  const bool a1 = !vertical_second && usable(x - 1, y + h - 1);
  const MvField* ma1 = a1 ? &pic_.motion_at(x - 1, y + h - 1) : nullptr;
  if (a1) list[count++] = *ma1;
  bool b1 = !horizontal_second && usable(x + w - 1, y - 1);
  const MvField* mb1 = b1 ? &pic_.motion_at(x + w - 1, y - 1) : nullptr;
  if (b1 && ma1 && same_motion(*ma1, *mb1)) b1 = false;
  if (b1) list[count++] = *mb1;
  bool b0 = usable(x + w, y - 1);
  if (b0 && mb1 && same_motion(*mb1, pic_.motion_at(x + w, y - 1))) b0 = false;
  if (b0) list[count++] = pic_.motion_at(x + w, y - 1);
  bool a0 = usable(x - 1, y + h);
  if (a0 && ma1 && same_motion(*ma1, pic_.motion_at(x - 1, y + h))) a0 = false;
  if (a0) list[count++] = pic_.motion_at(x - 1, y + h);
  if (count < 4 && usable(x - 1, y - 1)) {
    const MvField& mb2 = pic_.motion_at(x - 1, y - 1);
    if (!(ma1 && same_motion(*ma1, mb2)) && !(mb1 && same_motion(*mb1, mb2))) list[count++] = mb2;
  }
  // Note: B1 and A1 take part in the comparisons when available even if pruned themselves.
  if (merge_idx < count) {
    MvField m = list[merge_idx];
    if (m.ref_idx[0] >= 0 && m.ref_idx[1] >= 0 && orig_w + orig_h == 12) m.ref_idx[1] = -1;
    return m;
  }
  // Temporal candidate (8.5.3.2.8 with refIdxLXCol 0).
  const bool b_slice = sh_.slice_type == 0;
  if (count < sh_.max_num_merge_cand) {
    MvField col;
    if (temporal_mv(x, y, w, h, 0, 0, col.mv[0])) col.ref_idx[0] = 0;
    if (b_slice && temporal_mv(x, y, w, h, 1, 0, col.mv[1])) col.ref_idx[1] = 0;
    if (col.inter()) list[count++] = col;
  }
  MvField all[5];
  std::copy_n(list, count, all);
  // Combined bi-predictive candidates (8.5.3.2.4).
  const int orig = count;
  if (b_slice && orig > 1 && orig < sh_.max_num_merge_cand) {
    static constexpr int kL0[12] = {0, 1, 0, 2, 1, 2, 0, 3, 1, 3, 2, 3};
    static constexpr int kL1[12] = {1, 0, 2, 0, 2, 1, 3, 0, 3, 1, 3, 2};
    for (int c = 0; c < orig * (orig - 1) && count < sh_.max_num_merge_cand; ++c) {
      const MvField& l0 = all[kL0[c]];
      const MvField& l1 = all[kL1[c]];
      if (l0.ref_idx[0] < 0 || l1.ref_idx[1] < 0) continue;
      const bool same_pic = refs_->pic[0][l0.ref_idx[0]] == refs_->pic[1][l1.ref_idx[1]];
      if (same_pic && l0.mv[0][0] == l1.mv[1][0] && l0.mv[0][1] == l1.mv[1][1]) continue;
      MvField m;
      m.ref_idx[0] = l0.ref_idx[0];
      m.ref_idx[1] = l1.ref_idx[1];
      m.mv[0][0] = l0.mv[0][0], m.mv[0][1] = l0.mv[0][1];
      m.mv[1][0] = l1.mv[1][0], m.mv[1][1] = l1.mv[1][1];
      all[count++] = m;
    }
  }
  // Zero candidates (8.5.3.2.5).
  const int num_ref =
      b_slice ? std::min(sh_.num_ref_idx[0], sh_.num_ref_idx[1]) : sh_.num_ref_idx[0];
  for (int zero = 0; count <= merge_idx; ++zero) {
    MvField m;
    const int r = zero < num_ref ? zero : 0;
    m.ref_idx[0] = static_cast<std::int8_t>(r);
    if (b_slice) m.ref_idx[1] = static_cast<std::int8_t>(r);
    all[count++] = m;
  }
  MvField m = all[merge_idx];
  if (m.ref_idx[0] >= 0 && m.ref_idx[1] >= 0 && orig_w + orig_h == 12) m.ref_idx[1] = -1;
  return m;
}

void SliceDecoder::amvp(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h, int part_idx,
                        int lx, int ref_idx, int mvp_flag, int mvp[2]) {
  const int ly = 1 - lx;
  const int target_poc = refs_->poc[lx][ref_idx];
  const bool target_lt = refs_->long_term[lx][ref_idx];
  const DecodedPicture* target = refs_->pic[lx][ref_idx].get();
  // Without scaling: a neighbour's vector for the same picture, list X first.
  auto direct = [&](const MvField& m, std::int16_t out[2]) {
    for (int l : {lx, ly})
      if (m.ref_idx[l] >= 0 && refs_->pic[l][m.ref_idx[l]].get() == target) {
        out[0] = m.mv[l][0], out[1] = m.mv[l][1];
        return true;
      }
    return false;
  };
  // With scaling: any vector whose picture is long-term exactly when the target is.
  auto scaled = [&](const MvField& m, std::int16_t out[2]) {
    for (int l : {lx, ly}) {
      if (m.ref_idx[l] < 0 || refs_->long_term[l][m.ref_idx[l]] != target_lt) continue;
      out[0] = m.mv[l][0], out[1] = m.mv[l][1];
      const int ref_poc = refs_->poc[l][m.ref_idx[l]];
      if (!target_lt && !refs_->long_term[l][m.ref_idx[l]] && ref_poc != target_poc)
        scale_mv(out, pic_.poc - ref_poc, pic_.poc - target_poc);
      return true;
    }
    return false;
  };
  const int ax[2] = {x - 1, x - 1}, ay[2] = {y + h, y + h - 1};
  bool av_a[2];
  for (int k = 0; k < 2; ++k)
    av_a[k] = pb_available(x_cb, y_cb, n_cb, x, y, w, h, part_idx, ax[k], ay[k]);
  const bool is_scaled = av_a[0] || av_a[1];
  std::int16_t mva[2] = {}, mvb[2] = {};
  bool has_a = false, has_b = false;
  for (int k = 0; k < 2 && !has_a; ++k)
    if (av_a[k]) has_a = direct(pic_.motion_at(ax[k], ay[k]), mva);
  for (int k = 0; k < 2 && !has_a; ++k)
    if (av_a[k]) has_a = scaled(pic_.motion_at(ax[k], ay[k]), mva);
  const int bx[3] = {x + w, x + w - 1, x - 1}, by[3] = {y - 1, y - 1, y - 1};
  bool av_b[3];
  for (int k = 0; k < 3; ++k)
    av_b[k] = pb_available(x_cb, y_cb, n_cb, x, y, w, h, part_idx, bx[k], by[k]);
  for (int k = 0; k < 3 && !has_b; ++k)
    if (av_b[k]) has_b = direct(pic_.motion_at(bx[k], by[k]), mvb);
  if (!is_scaled && has_b) {
    has_a = true;
    mva[0] = mvb[0], mva[1] = mvb[1];
  }
  if (!is_scaled) {
    has_b = false;
    for (int k = 0; k < 3 && !has_b; ++k)
      if (av_b[k]) has_b = scaled(pic_.motion_at(bx[k], by[k]), mvb);
  }
  int cand[3][2];
  int n = 0;
  if (has_a) cand[n][0] = mva[0], cand[n][1] = mva[1], ++n;
  if (has_b && !(has_a && mva[0] == mvb[0] && mva[1] == mvb[1]))
    cand[n][0] = mvb[0], cand[n][1] = mvb[1], ++n;
  if (n < 2) {
    std::int16_t col[2];
    if (temporal_mv(x, y, w, h, lx, ref_idx, col)) cand[n][0] = col[0], cand[n][1] = col[1], ++n;
  }
  while (n < 2) cand[n][0] = cand[n][1] = 0, ++n;
  mvp[0] = cand[mvp_flag][0];
  mvp[1] = cand[mvp_flag][1];
}

bool SliceDecoder::temporal_mv(int x, int y, int w, int h, int list, int ref_idx,
                               std::int16_t mv[2]) const {
  if (!col_pic_) return false;
  const int xbr = x + w, ybr = y + h;
  if ((y >> sps_.log2_ctb) == (ybr >> sps_.log2_ctb) && ybr < sps_.height && xbr < sps_.width &&
      collocated_mv((xbr >> 4) << 4, (ybr >> 4) << 4, list, ref_idx, mv))
    return true;
  return collocated_mv(((x + (w >> 1)) >> 4) << 4, ((y + (h >> 1)) >> 4) << 4, list, ref_idx, mv);
}

bool SliceDecoder::collocated_mv(int x, int y, int lx, int ref_idx, std::int16_t mv[2]) const {
  const DecodedPicture& col = *col_pic_;
  if (col.motion.empty() || col.width[0] != pic_.width[0] || col.height[0] != pic_.height[0])
    return false;
  const MvField& m = col.motion_at(x, y);
  if (!m.inter()) return false;
  int list_col;
  if (m.ref_idx[0] < 0)
    list_col = 1;
  else if (m.ref_idx[1] < 0)
    list_col = 0;
  else
    list_col = no_backward_pred_ ? lx : (sh_.collocated_from_l0 ? 1 : 0);
  const int ctb = (y >> sps_.log2_ctb) * sps_.width_ctbs() + (x >> sps_.log2_ctb);
  const std::size_t slice = col.info.ctb_slice.empty() ? 0 : col.info.ctb_slice[ctb];
  if (slice >= col.slice_refs.size()) return false;
  const SliceRefs& cr = col.slice_refs[slice];
  const int rc = m.ref_idx[list_col];
  const bool col_lt = cr.long_term[list_col][rc];
  if (refs_->long_term[lx][ref_idx] != col_lt) return false;
  mv[0] = m.mv[list_col][0];
  mv[1] = m.mv[list_col][1];
  const int col_diff = col.poc - cr.poc[list_col][rc];
  const int cur_diff = pic_.poc - refs_->poc[lx][ref_idx];
  if (!refs_->long_term[lx][ref_idx] && col_diff != cur_diff && col_diff != 0)
    scale_mv(mv, col_diff, cur_diff);
  return true;
}

void SliceDecoder::store_motion(int x, int y, int w, int h, const MvField& m) {
  const std::size_t first = pic_.block(x, y), stride = static_cast<std::size_t>(pic_.blocks_w);
  const int across = w >> 2, down = h >> 2;
  for (int j = 0; j < down; ++j) std::fill_n(pic_.motion.data() + first + j * stride, across, m);
  if (pic_.info.motion.empty()) return;
  hevc_filter::Motion fm;
  for (int l = 0; l < 2; ++l) {
    if (m.ref_idx[l] < 0) continue;
    fm.ref[l] = static_cast<std::int32_t>(refs_->pic[l][m.ref_idx[l]]->decode_index);
    fm.mv[l][0] = m.mv[l][0];
    fm.mv[l][1] = m.mv[l][1];
  }
  for (int j = 0; j < down; ++j)
    std::fill_n(pic_.info.motion.data() + first + j * stride, across, fm);
}

}  // namespace sigpu::hevc
