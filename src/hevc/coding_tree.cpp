// slice_segment_data() (7.3.8): CTU loop with substreams and context initialisation/sync
// (9.3.1, 9.3.2), SAO syntax, coding quadtree, coding unit, transform tree and unit, QP
// derivation (8.6.1); the CU and transform-block records, and each CTU's reconstruction from
// them right after its parse.
#include <algorithm>
#include <string>
#include <type_traits>

#include "core/bit_reader.hpp"
#include "hevc/slice_decoder.hpp"
#include "hevc/wpp_rows.hpp"

namespace sigpu::hevc {
namespace {

using hevc_filter::BlockFlag;

// Calls f with the number of 4x4 blocks across a square block of the given size (4 to 64) as a
// compile-time constant (std::integral_constant), so that the loops over a block's rows of 4x4
// entries have a constant width: a row is a store or two rather than a loop or a memset call.
template <typename F>
void with_blocks_across(int size, F&& f) {
  switch (size) {
    case 4:
      return f(std::integral_constant<int, 1>{});
    case 8:
      return f(std::integral_constant<int, 2>{});
    case 16:
      return f(std::integral_constant<int, 4>{});
    case 32:
      return f(std::integral_constant<int, 8>{});
    default:
      return f(std::integral_constant<int, 16>{});
  }
}

// Sets the per-4x4 entries of v (ct_depth, intra_mode, pcm) covering the luma square at
// (x0, y0) of the given size, a row of blocks at a time.
template <typename T>
void fill_blocks(const DecodedPicture& pic, std::vector<T>& v, int x0, int y0, int size, T value) {
  with_blocks_across(size, [&](auto across) {
    constexpr int n = across();
    for (int j = 0; j < n; ++j)
      std::fill_n(v.begin() + static_cast<std::ptrdiff_t>(pic.block(x0, y0 + 4 * j)), n, value);
  });
}

int chroma_qp_table(int qpi) {
  static constexpr int kTable[13] = {29, 30, 31, 32, 33, 33, 34, 34, 35, 35, 36, 36, 37};
  if (qpi < 30) return qpi;
  if (qpi > 42) return qpi - 6;
  return kTable[qpi - 30];
}

}  // namespace

SliceDecoder::SliceDecoder(DecodedPicture& pic, const SliceHeader& sh, int slice_index,
                           PictureParseState& st, const RefPicLists* refs, PictureRecords* records)
    : pic_(pic),
      sps_(*pic.sps),
      pps_(*pic.pps),
      geo_(*pic.pps->geometry),
      sh_(sh),
      slice_index_(slice_index),
      st_(st),
      rec_(records ? *records : pic.records),
      params_(residual_params(sps_, pps_, scaling_)) {
  log2_min_qg_ = sps_.log2_ctb - pps_.diff_cu_qp_delta_depth;
  if (sh.slice_type == 2) return;
  if (!refs) fail("slice_type", "P or B slice without reference picture lists");
  refs_ = refs;
  for (int l = 0; l < 2; ++l) {
    if (refs->size[l] < sh.num_ref_idx[l])
      fail("num_ref_idx_active", "more than the reference picture list holds");
    for (int i = 0; i < refs->size[l]; ++i) {
      const DecodedPicture* r = refs->pic[l][i].get();
      if (!r || r->planes[0].empty() || r->width[0] != pic.width[0] ||
          r->height[0] != pic.height[0] || r->sps->bit_depth_luma != sps_.bit_depth_luma ||
          r->sps->bit_depth_chroma != sps_.bit_depth_chroma ||
          r->sps->chroma_format_idc != sps_.chroma_format_idc)
        fail("ref_pic_list", "reference picture " + std::to_string(i) + " of list " +
                                 std::to_string(l) + " is missing or of another format");
    }
  }
  init_type_ = sh.slice_type == 1 ? (sh.cabac_init ? 2 : 1) : (sh.cabac_init ? 1 : 2);
  no_backward_pred_ = true;
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < refs->size[l]; ++i) no_backward_pred_ &= refs->poc[l][i] <= pic.poc;
  if (sh.temporal_mvp) {
    const int l = sh.slice_type == 0 && !sh.collocated_from_l0 ? 1 : 0;
    if (sh.collocated_ref_idx >= refs->size[l])
      fail("collocated_ref_idx", "beyond the reference picture list");
    col_pic_ = refs->pic[l][sh.collocated_ref_idx].get();
  }
  // What temporal MV prediction in later pictures reads of this slice.
  if (static_cast<int>(pic.slice_refs.size()) <= slice_index)
    pic.slice_refs.resize(static_cast<std::size_t>(slice_index) + 1);
  SliceRefs& r = pic.slice_refs[static_cast<std::size_t>(slice_index)];
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < refs->size[l]; ++i) {
      r.poc[l][i] = refs->poc[l][i];
      r.long_term[l][i] = refs->long_term[l][i];
    }
}

void SliceDecoder::fail(const char* element, const std::string& what) const {
  throw DecodeError("CTB " + std::to_string(ctb_rs_) + " (" + std::to_string(ctb_x0_) + "," +
                    std::to_string(ctb_y0_) + "): " + element + ": " + what);
}

void SliceDecoder::start_substream(const NalUnit& nal, std::size_t pos) {
  if (pos >= nal.rbsp.size()) fail("slice_segment_data", "substream starts beyond the NAL unit");
  if (!cabac_.init(nal.rbsp.data(), nal.rbsp.size(), pos))
    fail("slice_segment_data", "ivlOffset of 510 or 511 where arithmetic decoding starts");
}

void SliceDecoder::find_near_ctbs() {
  const int ctb = sps_.ctb_size();
  for (int dy = -1; dy <= 0; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      const int xn = ctb_x0_ + dx * ctb, yn = ctb_y0_ + dy * ctb;
      near_ctbs_[dy + 1][dx + 1] = (dx != 0 || dy != 0) && xn >= 0 && yn >= 0 && xn < sps_.width &&
                                   yn < sps_.height &&
                                   available_in_other_ctb(ctb_x0_, ctb_y0_, xn, yn);
    }
}

bool SliceDecoder::available_in_other_ctb(int x_cur, int y_cur, int xn, int yn) const {
  const int w = geo_.width_ctbs, l = sps_.log2_ctb;
  const int ctb_n = (yn >> l) * w + (xn >> l);
  if (pic_.ctb_slice_addr[ctb_n] != sh_.slice_address) return false;
  const int ctb_c = (y_cur >> l) * w + (x_cur >> l);
  if (ctb_n != ctb_c && geo_.tile_id[geo_.rs_to_ts[ctb_n]] != geo_.tile_id[geo_.rs_to_ts[ctb_c]])
    return false;
  return geo_.zscan(xn, yn) <= geo_.zscan(x_cur, y_cur);
}

void SliceDecoder::decode(const NalUnit& nal) {
  try {
    decode_ctus(nal);
  } catch (...) {
    // The records keep the CTBs parsed to their end only, as the picture's samples do.
    rec_.truncate_to_parsed();
    throw;
  }
}

namespace {

/// Prefetches, for writing, `across` elements of `rows` rows of a per-block array from `first`.
template <class T>
void prefetch_rows(const std::vector<T>& v, std::size_t first, std::size_t stride, int rows,
                   int across) {
  if (v.empty()) return;
  for (int j = 0; j < rows; ++j) {
    const auto* row = reinterpret_cast<const char*>(v.data() + first + j * stride);
    const auto bytes = static_cast<std::size_t>(across) * sizeof(T);
    for (std::size_t at = 0; at < bytes; at += 64) __builtin_prefetch(row + at, 1);
    __builtin_prefetch(row + bytes - 1, 1);
  }
}

}  // namespace

// The per-block state is written once per picture, in storage a picture many pictures back
// last wrote: every line of it misses every cache. Asked for while the CTB before parses, the
// lines are there when its stores come.
void SliceDecoder::prefetch_ctb_state(int x0, int y0) const {
  const int size = 1 << sps_.log2_ctb;
  const int across = (std::min(size, pic_.width[0] - x0) + 3) >> 2;
  const int rows = (std::min(size, pic_.height[0] - y0) + 3) >> 2;
  const std::size_t first = pic_.block(x0, y0), stride = static_cast<std::size_t>(pic_.blocks_w);
  prefetch_rows(pic_.motion, first, stride, rows, across);
  prefetch_rows(pic_.info.motion, first, stride, rows, across);
  prefetch_rows(pic_.info.blocks, first, stride, rows, across);
  prefetch_rows(pic_.intra_mode, first, stride, rows, across);
  prefetch_rows(pic_.ct_depth, first, stride, rows, across);
  prefetch_rows(pic_.skip, first, stride, rows, across);
  prefetch_rows(pic_.pcm, first, stride, rows, across);
}

bool SliceDecoder::parse_ctb(int rs, int ts, bool first) {
  const int w = geo_.width_ctbs;
  ctb_rs_ = rs;
  ctb_x0_ = (rs % w) << sps_.log2_ctb;
  ctb_y0_ = (rs / w) << sps_.log2_ctb;
  pic_.ctb_slice_addr[rs] = sh_.slice_address;
  pic_.info.ctb_slice[rs] = static_cast<std::uint16_t>(slice_index_);
  // Temporal MV prediction reads the collocated picture's motion in this CTB row only.
  if (col_pic_) col_pic_->progress.wait_rows((rs / w) + 1);
  if ((rs + 1) % w != 0) prefetch_ctb_state(ctb_x0_ + (1 << sps_.log2_ctb), ctb_y0_);
  find_near_ctbs();
  const std::size_t cu_begin = rec_.cu.size();
  init_contexts_for_ctb(rs, ts, first);
  if (sh_.sao_luma || sh_.sao_chroma) parse_sao(rs % w, rs / w, rs, ts);
  coding_quadtree(ctb_x0_, ctb_y0_, sps_.log2_ctb, 0);
  const bool end = cabac_.terminate();
  if (cabac_.overrun())
    fail("coding_tree_unit", "slice data ends inside the CTU (truncated NAL unit)");
  if (st_.reconstruct) reconstruct_ctu(cu_begin);
  rec_.commit_ctb(rs, cu_begin);
  pic_.ctb_done[rs] = 1;
  if (pps_.entropy_coding_sync &&
      (rs % w == 1 || (rs > 1 && geo_.tile_id[ts] != geo_.tile_id[geo_.rs_to_ts[rs - 2]])))
    st_.wpp = ctx_;
  return end;
}

void SliceDecoder::end_substream(std::size_t substream) {
  if (!cabac_.terminate()) fail("end_of_subset_one_bit", "is 0");
  const std::size_t pos = cabac_.aligned_position_after_terminate();
  if (substream < sh_.entry_points.size() && sh_.entry_points[substream] != pos)
    fail("entry_point_offset_minus1", "substream " + std::to_string(substream + 1) +
                                          " does not start where the previous one ended (" +
                                          std::to_string(pos) + " vs " +
                                          std::to_string(sh_.entry_points[substream]) + ")");
  start_substream(*nal_, pos);
}

void SliceDecoder::decode_ctus(const NalUnit& nal) {
  nal_ = &nal;
  const int w = geo_.width_ctbs, n_ctbs = geo_.width_ctbs * geo_.height_ctbs;
  int ts = geo_.rs_to_ts[sh_.segment_address];
  ctb_rs_ = sh_.segment_address;
  if (sh_.dependent && st_.last_ctb_ts != ts - 1)
    fail("slice_segment_address", "dependent slice segment does not continue the previous one");
  if (pic_.ctb_slice_addr[sh_.segment_address] != -1)
    fail("slice_segment_address", "CTB already decoded in this picture");
  start_substream(nal, sh_.data_offset);
  std::size_t substream = 0;
  // A dependent segment continues the slice's QP prediction (8.6.1: first QG in a slice).
  qg_reset_ = !sh_.dependent;
  for (bool first = true;; first = false) {
    const int rs = geo_.ts_to_rs[ts];
    const bool end = parse_ctb(rs, ts, first);
    ++pic_.decoded_ctbs;
    pic_.ctb_parsed(rs);
    st_.last_ctb_ts = ts;
    ++ts;
    if (end) {
      st_.ds = ctx_;
      st_.ds_valid = true;
      return;
    }
    if (ts >= n_ctbs) fail("end_of_slice_segment_flag", "0 after the last CTB of the picture");
    const int next_rs = geo_.ts_to_rs[ts];
    const bool new_tile = pps_.tiles && geo_.tile_id[ts] != geo_.tile_id[ts - 1];
    const bool new_row =
        pps_.entropy_coding_sync &&
        (next_rs % w == 0 || geo_.tile_id[ts] != geo_.tile_id[geo_.rs_to_ts[next_rs - 1]]);
    if (new_tile || new_row) end_substream(substream++);
  }
}

void SliceDecoder::begin_row(const NalUnit& nal, int row) {
  nal_ = &nal;
  start_substream(nal, row == 0 ? sh_.data_offset : sh_.entry_points[row - 1]);
  qg_reset_ = true;
}

SliceDecoder::RowState SliceDecoder::continue_row(int row, int& x, WppRows& rows) {
  const int w = geo_.width_ctbs, n_ctbs = geo_.width_ctbs * geo_.height_ctbs;
  for (; x < w;) {
    const int rs = row * w + x;
    // WPP: the CTB above-right is parsed (and, at the row's start, the contexts after it).
    if (row > 0) {
      const WppRows::Ready above = rows.ready(row - 1, std::min(x + 2, w));
      if (above == WppRows::Ready::no) return RowState::waiting;
      if (above == WppRows::Ready::stopped) return RowState::incomplete;
    }
    if (x == 0 && row > 0) st_.wpp = rows.contexts(row - 1);
    const bool end = parse_ctb(rs, rs, rs == 0);
    if (x == 1) rows.save_contexts(row, ctx_);
    rows.done(row, ++x);
    // The segment may end before the picture does: the CTBs after it are in no slice.
    if (end) return rs == n_ctbs - 1 ? RowState::complete : RowState::incomplete;
    if (rs == n_ctbs - 1) fail("end_of_slice_segment_flag", "0 after the last CTB of the picture");
    if (x == w) end_substream(static_cast<std::size_t>(row));
  }
  return RowState::complete;
}

void SliceDecoder::init_contexts_for_ctb(int rs, int ts, bool first) {
  const int w = geo_.width_ctbs;
  const bool tile_start = ts == 0 || geo_.tile_id[ts] != geo_.tile_id[ts - 1];
  const bool row_start = pps_.entropy_coding_sync &&
                         (rs % w == 0 || geo_.tile_id[ts] != geo_.tile_id[geo_.rs_to_ts[rs - 1]]);
  if ((first && !sh_.dependent) || tile_start) {
    ctx_ = init_contexts(sh_.slice_qp, init_type_);
    qg_reset_ = true;
    return;
  }
  if (row_start) {
    qg_reset_ = true;
    const int ctb = sps_.ctb_size();
    ctx_ = available(ctb_x0_, ctb_y0_, ctb_x0_ + ctb, ctb_y0_ - ctb)
               ? st_.wpp
               : init_contexts(sh_.slice_qp, init_type_);
    return;
  }
  if (first) {
    if (!st_.ds_valid)
      fail("dependent_slice_segment_flag", "no preceding slice segment to continue");
    ctx_ = st_.ds;
  }
}

void SliceDecoder::parse_sao(int rx, int ry, int rs, int ts) {
  auto& all = pic_.info.sao_params;
  hevc_filter::SaoParams& cur = all[rs];
  cur = {};
  const int w = geo_.width_ctbs;
  if (rx > 0 && rs > sh_.slice_address && geo_.tile_id[ts] == geo_.tile_id[geo_.rs_to_ts[rs - 1]]) {
    if (cabac_.decode(ctx_[kCtxSaoMerge])) {
      cur = all[rs - 1];
      return;
    }
  }
  if (ry > 0 && rs - w >= sh_.slice_address &&
      geo_.tile_id[ts] == geo_.tile_id[geo_.rs_to_ts[rs - w]]) {
    if (cabac_.decode(ctx_[kCtxSaoMerge])) {
      cur = all[rs - w];
      return;
    }
  }
  const int comps = sps_.chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    if (!(c == 0 ? sh_.sao_luma : sh_.sao_chroma)) continue;
    if (c < 2) {
      int type = 0;
      if (cabac_.decode(ctx_[kCtxSaoType])) type = cabac_.bypass() ? 2 : 1;
      cur.type[c] = static_cast<std::uint8_t>(type);
    } else {
      cur.type[2] = cur.type[1];
    }
    if (cur.type[c] == 0) continue;
    const int bit_depth = c ? sps_.bit_depth_chroma : sps_.bit_depth_luma;
    const int cmax = (1 << (std::min(bit_depth, 10) - 5)) - 1;
    int abs_v[4];
    for (int& a : abs_v) a = cabac_.bypass_ones(cmax);
    const int scale = c ? pps_.log2_sao_offset_scale_chroma : pps_.log2_sao_offset_scale_luma;
    if (cur.type[c] == 1) {
      for (int i = 0; i < 4; ++i)
        if (abs_v[i] && cabac_.bypass()) abs_v[i] = -abs_v[i];
      cur.band_position[c] = static_cast<std::uint8_t>(cabac_.bypass_bits(5));
      for (int i = 0; i < 4; ++i)
        cur.offset[c][i] = static_cast<std::int16_t>(abs_v[i] * (1 << scale));
    } else {
      if (c < 2)
        cur.eo_class[c] = static_cast<std::uint8_t>(cabac_.bypass_bits(2));
      else
        cur.eo_class[2] = cur.eo_class[1];
      for (int i = 0; i < 4; ++i)
        cur.offset[c][i] = static_cast<std::int16_t>((i < 2 ? abs_v[i] : -abs_v[i]) * (1 << scale));
    }
  }
}

void SliceDecoder::coding_quadtree(int x0, int y0, int log2, int depth) {
  const int size = 1 << log2;
  bool split;
  if (x0 + size <= sps_.width && y0 + size <= sps_.height && log2 > sps_.log2_min_cb) {
    int inc = 0;
    if (available(x0, y0, x0 - 1, y0) && pic_.ct_depth[pic_.block(x0 - 1, y0)] > depth) ++inc;
    if (available(x0, y0, x0, y0 - 1) && pic_.ct_depth[pic_.block(x0, y0 - 1)] > depth) ++inc;
    split = cabac_.decode(ctx_[kCtxSplitCu + inc]);
  } else {
    split = log2 > sps_.log2_min_cb;
  }
  if (log2 >= log2_min_qg_) start_quantization_group(x0, y0);
  if (split) {
    const int h = size >> 1;
    for (int i = 0; i < 4; ++i) {
      const int x = x0 + (i & 1) * h, y = y0 + (i >> 1) * h;
      if (x < sps_.width && y < sps_.height) coding_quadtree(x, y, log2 - 1, depth + 1);
    }
    return;
  }
  fill_blocks(pic_, pic_.ct_depth, x0, y0, size, static_cast<std::uint8_t>(depth));
  coding_unit(x0, y0, log2);
}

void SliceDecoder::start_quantization_group(int x, int y) {
  cu_qp_delta_coded_ = false;
  cu_qp_delta_ = 0;
  if (qg_reset_) {
    st_.last_qp_y = sh_.slice_qp;
    qg_reset_ = false;
  }
  const int prev = st_.last_qp_y;
  const int mask = sps_.ctb_size() - 1;
  const int qp_a = (x & mask) ? pic_.info.blocks[pic_.block(x - 1, y)].qp_y : prev;
  const int qp_b = (y & mask) ? pic_.info.blocks[pic_.block(x, y - 1)].qp_y : prev;
  qp_pred_ = (qp_a + qp_b + 1) >> 1;
}

void SliceDecoder::set_cu_qp() {
  const int off = sps_.qp_bd_offset_y();
  qp_y_ = ((qp_pred_ + cu_qp_delta_ + 52 + 2 * off) % (52 + off)) - off;
}

int SliceDecoder::chroma_qp(int c) const {
  const int off = sps_.qp_bd_offset_c();
  const int qpi = std::clamp(qp_y_ + (c == 1 ? pps_.cb_qp_offset + sh_.cb_qp_offset
                                             : pps_.cr_qp_offset + sh_.cr_qp_offset),
                             -off, 57);
  return chroma_qp_table(qpi) + off;
}

void SliceDecoder::parse_cu_qp_delta() {
  int v = 0;
  while (v < 5 && cabac_.decode(ctx_[kCtxCuQpDelta + (v == 0 ? 0 : 1)])) ++v;
  if (v == 5) {
    const int k = cabac_.bypass_ones(17);  // EG0
    if (k > 16) fail("cu_qp_delta_abs", "suffix longer than 16 bins");
    v += (1 << k) - 1 + static_cast<int>(cabac_.bypass_bits(k));
  }
  if (v && cabac_.bypass()) v = -v;
  const int half = sps_.qp_bd_offset_y() / 2;
  if (v < -(26 + half) || v > 25 + half)
    fail("cu_qp_delta_abs", "CuQpDeltaVal " + std::to_string(v) + " out of range");
  cu_qp_delta_ = v;
  cu_qp_delta_coded_ = true;
  set_cu_qp();
}

void SliceDecoder::coding_unit(int x0, int y0, int log2) {
  const int size = 1 << log2;
  cu_x0_ = x0;
  cu_y0_ = y0;
  cu_log2_ = log2;
  transquant_bypass_ = pps_.transquant_bypass && cabac_.decode(ctx_[kCtxTransquantBypass]);
  cu_intra_ = true;
  if (sh_.slice_type != 2) {
    int inc = 0;
    if (available(x0, y0, x0 - 1, y0) && pic_.skip[pic_.block(x0 - 1, y0)]) ++inc;
    if (available(x0, y0, x0, y0 - 1) && pic_.skip[pic_.block(x0, y0 - 1)]) ++inc;
    const bool skip = cabac_.decode(ctx_[kCtxCuSkip + inc]);
    if (skip || !cabac_.decode(ctx_[kCtxPredMode])) {
      cu_intra_ = false;
      set_cu_qp();
      fill_blocks(pic_, pic_.intra_mode, x0, y0, size, std::uint8_t{1});
      fill_blocks(pic_, pic_.pcm, x0, y0, size, std::uint8_t{0});
      if (skip) fill_blocks(pic_, pic_.skip, x0, y0, size, std::uint8_t{1});
      const int part_mode = skip ? 0 : parse_part_mode_inter(log2);
      push_cu(x0, y0, log2,
              static_cast<std::uint8_t>((transquant_bypass_ ? kCuBypass : 0) |
                                        part_mode << kCuPartModeShift));
      inter_coding_unit(x0, y0, log2, skip, part_mode);
      return;
    }
  }
  bool nxn = false;
  if (log2 == sps_.log2_min_cb) nxn = !cabac_.decode(ctx_[kCtxPartMode]);
  bool pcm = false;
  if (!nxn && sps_.pcm && log2 >= sps_.log2_min_pcm_cb && log2 <= sps_.log2_max_pcm_cb)
    pcm = cabac_.terminate();
  set_cu_qp();
  push_cu(x0, y0, log2,
          static_cast<std::uint8_t>(kCuIntra | (transquant_bypass_ ? kCuBypass : 0) |
                                    (pcm ? kCuPcm : 0) | (nxn ? 3 : 0) << kCuPartModeShift));
  if (pcm) {
    fill_blocks(pic_, pic_.pcm, x0, y0, size, std::uint8_t{1});
    fill_blocks(pic_, pic_.intra_mode, x0, y0, size, std::uint8_t{1});
    pcm_sample(log2);
    record_cu(x0, y0, log2, sps_.pcm_loop_filter_disabled || transquant_bypass_);
    record_tu(x0, y0, log2, false);
    st_.last_qp_y = qp_y_;
    return;
  }
  const int parts = nxn ? 4 : 1;
  const int pb = nxn ? size / 2 : size;
  bool prev_flag[4];
  for (int i = 0; i < parts; ++i) prev_flag[i] = cabac_.decode(ctx_[kCtxPrevIntraLuma]);
  for (int i = 0; i < parts; ++i) {
    const int px = x0 + (i & 1) * pb, py = y0 + (i >> 1) * pb;
    int mpm_idx = -1, rem = 0;
    if (prev_flag[i])
      mpm_idx = cabac_.bypass() ? (cabac_.bypass() ? 2 : 1) : 0;
    else
      rem = static_cast<int>(cabac_.bypass_bits(5));
    auto cand_at = [&](int xn, int yn) {
      if (!available(px, py, xn, yn)) return 1;
      const std::size_t b = pic_.block(xn, yn);
      return pic_.pcm[b] ? 1 : static_cast<int>(pic_.intra_mode[b]);
    };
    const int a = cand_at(px - 1, py);
    const int b = (py - 1) < ((py >> sps_.log2_ctb) << sps_.log2_ctb) ? 1 : cand_at(px, py - 1);
    int cand[3];
    if (a == b) {
      if (a < 2) {
        cand[0] = 0, cand[1] = 1, cand[2] = 26;
      } else {
        cand[0] = a, cand[1] = 2 + ((a + 29) % 32), cand[2] = 2 + ((a - 2 + 1) % 32);
      }
    } else {
      cand[0] = a, cand[1] = b;
      cand[2] = (a != 0 && b != 0) ? 0 : ((a != 1 && b != 1) ? 1 : 26);
    }
    int mode;
    if (mpm_idx >= 0) {
      mode = cand[mpm_idx];
    } else {
      std::sort(cand, cand + 3);
      mode = rem;
      for (int k = 0; k < 3; ++k)
        if (mode >= cand[k]) ++mode;
    }
    fill_blocks(pic_, pic_.intra_mode, px, py, pb, static_cast<std::uint8_t>(mode));
    rec_.cu.luma_modes.back()[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(mode);
    fill_blocks(pic_, pic_.pcm, px, py, pb, std::uint8_t{0});
  }
  if (sps_.chroma_format_idc != 0) {
    int idc = 4;
    if (cabac_.decode(ctx_[kCtxIntraChroma])) idc = static_cast<int>(cabac_.bypass_bits(2));
    const int luma = pic_.intra_mode[pic_.block(x0, y0)];
    static constexpr int kCand[4] = {0, 26, 10, 1};
    chroma_mode_ = idc == 4 ? luma : (kCand[idc] == luma ? 34 : kCand[idc]);
    rec_.cu.chroma_mode.back() = static_cast<std::uint8_t>(chroma_mode_);
  }
  intra_split_ = nxn ? 1 : 0;
  max_trafo_depth_ = sps_.max_transform_hierarchy_depth_intra + intra_split_;
  record_cu(x0, y0, log2, transquant_bypass_);
  const int recorded_qp = qp_y_;
  transform_tree(x0, y0, x0, y0, log2, 0, 0, false, false);
  // The CU's QpY may have changed with a cu_qp_delta in one of its transform units.
  if (qp_y_ != recorded_qp)
    for (int y = y0; y < y0 + size; y += 4)
      for (int x = x0; x < x0 + size; x += 4)
        pic_.info.blocks[pic_.block(x, y)].qp_y = static_cast<std::int8_t>(qp_y_);
  st_.last_qp_y = qp_y_;
}

void SliceDecoder::pcm_sample(int log2) {
  const std::size_t pos = cabac_.aligned_position_after_terminate();
  const auto& rbsp = nal_->rbsp;
  if (pos >= rbsp.size()) fail("pcm_sample_luma", "PCM samples beyond the NAL unit");
  BitReader br(rbsp.data(), rbsp.size(), pos);
  const int n = 1 << log2;
  auto read_block = [&](int size, int pcm_depth, int depth) {
    for (int i = 0; i < size * size; ++i)
      rec_.pcm.push_back(static_cast<std::uint16_t>(br.read(static_cast<unsigned>(pcm_depth))
                                                    << (depth - pcm_depth)));
  };
  read_block(n, sps_.pcm_bit_depth_luma, sps_.bit_depth_luma);
  if (sps_.chroma_format_idc != 0) {
    read_block(n / 2, sps_.pcm_bit_depth_chroma, sps_.bit_depth_chroma);
    read_block(n / 2, sps_.pcm_bit_depth_chroma, sps_.bit_depth_chroma);
  }
  if (br.overrun()) fail("pcm_sample_luma", "PCM samples run past the NAL unit");
  const std::size_t end = br.byte_position();
  if (end >= rbsp.size()) fail("pcm_sample_chroma", "no slice data after the PCM samples");
  if (!cabac_.init(rbsp.data(), rbsp.size(), end))
    fail("pcm_sample", "ivlOffset of 510 or 511 where arithmetic decoding starts again");
}

void SliceDecoder::transform_tree(int x0, int y0, int xb, int yb, int log2, int depth, int blk,
                                  bool parent_cb, bool parent_cr) {
  bool split;
  if (log2 <= sps_.log2_max_tb && log2 > sps_.log2_min_tb && depth < max_trafo_depth_ &&
      !(intra_split_ && depth == 0))
    split = cabac_.decode(ctx_[kCtxSplitTransform + 5 - log2]);
  else
    split = log2 > sps_.log2_max_tb || (intra_split_ && depth == 0) || (inter_split_ && depth == 0);
  bool cb = false, cr = false;
  if (sps_.chroma_format_idc != 0) {
    if (log2 > 2) {
      if (depth == 0 || parent_cb) cb = cabac_.decode(ctx_[kCtxCbfChroma + depth]);
      if (depth == 0 || parent_cr) cr = cabac_.decode(ctx_[kCtxCbfChroma + depth]);
    } else {
      cb = parent_cb;
      cr = parent_cr;
    }
  }
  if (split) {
    const int h = 1 << (log2 - 1);
    for (int i = 0; i < 4; ++i)
      transform_tree(x0 + (i & 1) * h, y0 + (i >> 1) * h, x0, y0, log2 - 1, depth + 1, i, cb, cr);
    return;
  }
  const bool cbf_luma = (cu_intra_ || depth != 0 || cb || cr)
                            ? cabac_.decode(ctx_[kCtxCbfLuma + (depth == 0 ? 1 : 0)])
                            : true;
  transform_unit(x0, y0, xb, yb, log2, blk, cbf_luma, cb, cr);
}

void SliceDecoder::transform_unit(int x0, int y0, int xb, int yb, int log2, int blk, bool cbf_l,
                                  bool cbf_cb, bool cbf_cr) {
  if ((cbf_l || cbf_cb || cbf_cr) && pps_.cu_qp_delta_enabled && !cu_qp_delta_coded_)
    parse_cu_qp_delta();
  push_tu(0, x0, y0, log2, pic_.intra_mode[pic_.block(x0, y0)], cbf_l);
  record_tu(x0, y0, log2, cbf_l);
  if (sps_.chroma_format_idc == 0) return;
  if (log2 > 2) {
    push_tu(1, x0 / 2, y0 / 2, log2 - 1, chroma_mode_, cbf_cb);
    push_tu(2, x0 / 2, y0 / 2, log2 - 1, chroma_mode_, cbf_cr);
  } else if (blk == 3) {
    push_tu(1, xb / 2, yb / 2, 2, chroma_mode_, cbf_cb);
    push_tu(2, xb / 2, yb / 2, 2, chroma_mode_, cbf_cr);
  }
}

void SliceDecoder::push_cu(int x0, int y0, int log2, std::uint8_t flags) {
  CuRecords& cu = rec_.cu;
  cu.x.push_back(static_cast<std::uint16_t>(x0));
  cu.y.push_back(static_cast<std::uint16_t>(y0));
  cu.log2.push_back(static_cast<std::uint8_t>(log2));
  cu.flags.push_back(flags);
  cu.luma_modes.push_back({1, 1, 1, 1});
  cu.chroma_mode.push_back(0);
  cu.pu_begin.push_back(static_cast<std::uint32_t>(rec_.pu.size()));
  cu.tu_begin.push_back(static_cast<std::uint32_t>(rec_.tu.size()));
  cu.pcm_begin.push_back(static_cast<std::uint32_t>(rec_.pcm.size()));
}

void SliceDecoder::push_tu(int c, int x, int y, int log2, int mode, bool coded) {
  if (!coded && !cu_intra_) return;  // the inter prediction stands as it is
  int scan_idx = 0;
  if (cu_intra_ && (log2 == 2 || (log2 == 3 && c == 0))) {
    if (mode >= 6 && mode <= 14)
      scan_idx = 2;
    else if (mode >= 22 && mode <= 30)
      scan_idx = 1;
  }
  bool tskip = false;
  int cols = 0, rows = 0, count = 0;
  if (coded) {
    count = residual_coding(log2, c, scan_idx, levels_, tskip, cols, rows);
    rec_.coeffs.insert(rec_.coeffs.end(), levels_, levels_ + count);
  }
  TuRecords& tu = rec_.tu;
  std::uint32_t avail = 0;
  bool corner = false;
  if (cu_intra_) {
    if (c == 2) {  // Cr right after Cb, the same positions
      avail = tu.avail.back();
      corner = tu.flags.back() & kTuCorner;
    } else {
      avail = intra_availability(c, x, y, log2, corner);
    }
  }
  tu.x.push_back(static_cast<std::uint16_t>(x));
  tu.y.push_back(static_cast<std::uint16_t>(y));
  tu.log2.push_back(static_cast<std::uint8_t>(log2));
  tu.comp.push_back(static_cast<std::uint8_t>(c));
  tu.mode.push_back(static_cast<std::uint8_t>(cu_intra_ ? mode : 0));  // inter: no mode
  tu.qp.push_back(static_cast<std::uint8_t>(c == 0 ? qp_y_ + sps_.qp_bd_offset_y() : chroma_qp(c)));
  tu.flags.push_back(static_cast<std::uint8_t>(
      (coded ? kTuCoded : 0) | (tskip ? kTuSkip : 0) | (cu_intra_ ? kTuIntra : 0) |
      (transquant_bypass_ ? kTuBypass : 0) | (corner ? kTuCorner : 0)));
  tu.avail.push_back(avail);
  tu.cols.push_back(static_cast<std::uint8_t>(cols));
  tu.rows.push_back(static_cast<std::uint8_t>(rows));
  tu.coeff_begin.push_back(static_cast<std::uint32_t>(rec_.coeffs.size() - count));
  tu.coeff_count.push_back(static_cast<std::uint16_t>(count));
}

std::uint32_t SliceDecoder::intra_availability(int c, int x, int y, int log2, bool& corner) const {
  const int n = 1 << log2;
  const int shift = c ? 1 : 0;  // 4:2:0
  const int unit = avail_unit(c);
  const int units = 2 * n / unit;  // per side
  // The block whose availability rules apply: for the chroma of four 4x4 luma blocks, their
  // 8x8 parent.
  const int cur_x = x << shift, cur_y = y << shift;
  const std::uint32_t z_cur = geo_.zscan_in_ctb(cur_x, cur_y, sps_.log2_ctb);
  // The neighbours beside the block (the first half of each side) lie in one CTB and precede
  // the block in z-scan order (it is a quadtree node inside the picture), so they share the
  // first one's availability; only those below-left and above-right need asking one by one.
  const std::uint32_t half = (1u << (units / 2)) - 1;
  std::uint32_t left = available(cur_x, cur_y, z_cur, (x - 1) << shift, y << shift) ? half : 0;
  std::uint32_t top = available(cur_x, cur_y, z_cur, x << shift, (y - 1) << shift) ? half : 0;
  for (int u = units / 2; u < units; ++u) {
    left |= std::uint32_t{available(cur_x, cur_y, z_cur, (x - 1) << shift, (y + u * unit) << shift)}
            << u;
    top |= std::uint32_t{available(cur_x, cur_y, z_cur, (x + u * unit) << shift, (y - 1) << shift)}
           << u;
  }
  corner = available(cur_x, cur_y, z_cur, (x - 1) << shift, (y - 1) << shift);
  if (pps_.constrained_intra_pred && pic_.inter) {
    // 8.4.4.2.2: samples of inter coding units are not available for intra prediction. The
    // neighbours' motion is known: they precede the block in decoding order, and intra CUs
    // store theirs as not inter.
    auto intra_at = [&](int xn, int yn) { return !pic_.motion_at(xn, yn).inter(); };
    for (int u = 0; u < units; ++u) {
      if (((left >> u) & 1) && !intra_at((x - 1) << shift, (y + u * unit) << shift))
        left &= ~(1u << u);
      if (((top >> u) & 1) && !intra_at((x + u * unit) << shift, (y - 1) << shift))
        top &= ~(1u << u);
    }
    if (corner && !intra_at((x - 1) << shift, (y - 1) << shift)) corner = false;
  }
  return left | top << kAvailTopShift;
}

void SliceDecoder::record_cu(int x0, int y0, int log2, bool no_filter) {
  const int size = 1 << log2;
  auto& blocks = pic_.info.blocks;
  // filterEdgeFlag of the coding block's left and top edges (8.7.2.3).
  auto edge_ok = [&](int xn, int yn) {
    if (sh_.deblocking_disabled || xn < 0 || yn < 0) return false;
    const int w = geo_.width_ctbs, l = sps_.log2_ctb;
    const int ctb_n = (yn >> l) * w + (xn >> l), ctb_c = (y0 >> l) * w + (x0 >> l);
    if (ctb_n == ctb_c) return true;
    if (!pps_.loop_filter_across_tiles &&
        geo_.tile_id[geo_.rs_to_ts[ctb_n]] != geo_.tile_id[geo_.rs_to_ts[ctb_c]])
      return false;
    if (!sh_.loop_filter_across_slices && pic_.ctb_slice_addr[ctb_n] != sh_.slice_address)
      return false;
    return true;
  };
  const bool left_ok = edge_ok(x0 - 1, y0), top_ok = edge_ok(x0, y0 - 1);
  if (cu_intra_) store_motion(x0, y0, size, size, MvField{});
  // The whole block first, then its left column and top row (no per-block edge tests).
  const hevc_filter::BlockInfo inner{
      static_cast<std::uint8_t>((cu_intra_ ? hevc_filter::kIntra : 0) |
                                (no_filter ? hevc_filter::kNoFilter : 0)),
      0, static_cast<std::int8_t>(qp_y_)};
  hevc_filter::BlockInfo* first = blocks.data() + pic_.block(x0, y0);
  with_blocks_across(size, [&](auto across) {
    constexpr int n = across();
    for (int j = 0; j < n; ++j) {
      hevc_filter::BlockInfo* row = first + static_cast<std::size_t>(j) * pic_.blocks_w;
      std::fill_n(row, n, inner);
      row[0].flags |= hevc_filter::kLeftPuEdge;
      if (left_ok) row[0].deblock |= hevc_filter::kFilterLeft;
    }
    for (int i = 0; i < n; ++i) {
      first[i].flags |= hevc_filter::kTopPuEdge;
      if (top_ok) first[i].deblock |= hevc_filter::kFilterTop;
    }
  });
}

void SliceDecoder::record_tu(int x0, int y0, int log2, bool coded_luma) {
  const int size = 1 << log2;
  const bool inner_ok = !sh_.deblocking_disabled;
  const bool filter_left = x0 != cu_x0_ && inner_ok, filter_top = y0 != cu_y0_ && inner_ok;
  hevc_filter::BlockInfo* first = pic_.info.blocks.data() + pic_.block(x0, y0);
  with_blocks_across(size, [&](auto across) {
    constexpr int n = across();
    for (int j = 0; j < n; ++j) {
      hevc_filter::BlockInfo* row = first + static_cast<std::size_t>(j) * pic_.blocks_w;
      if (coded_luma)
        for (int i = 0; i < n; ++i) row[i].flags |= hevc_filter::kCodedLuma;
      row[0].flags |= hevc_filter::kLeftTuEdge;
      if (filter_left) row[0].deblock |= hevc_filter::kFilterLeft;
    }
    for (int i = 0; i < n; ++i) {
      first[i].flags |= hevc_filter::kTopTuEdge;
      if (filter_top) first[i].deblock |= hevc_filter::kFilterTop;
    }
  });
}

}  // namespace sigpu::hevc
